package pybridge

/*
#include "asgi.h"

// Per-part instruments for the benchmarks: each runs a part n times in
// one cgo call, on a thread holding the GIL. 0, or -1 on a Python error.
static int m0_asgi_parts_scope(m0_asgi *ex, const m0_request *req, const char *head,
                               const m0_field *fields, const char *remote, int n)
{
	for (int i = 0; i < n; i++) {
		PyObject *scope = m0_asgi_scope_build(&ex->apps[0], req, head, fields, remote);
		if (scope == NULL) {
			PyErr_Clear();
			return -1;
		}
		Py_DECREF(scope);
	}
	return 0;
}

// Six fields: a typical small app response head.
static int m0_asgi_parts_head(m0_response *r, int n)
{
	PyObject *status = PyLong_FromLong(200);
	PyObject *headers = Py_BuildValue("[(y#y#)(y#y#)(y#y#)(y#y#)(y#y#)(y#y#)]",
		"content-type", 12, "text/plain; charset=utf-8", 25,
		"content-length", 14, "13", 2,
		"cache-control", 13, "no-store", 8,
		"x-request-id", 12, "0123456789abcdef", 16,
		"vary", 4, "accept-encoding", 15,
		"server-timing", 13, "app;dur=0.1", 11);
	int rc = status && headers ? 0 : -1;
	for (int i = 0; i < n && rc == 0; i++)
		rc = m0_asgi_read_head(r, status, headers);
	if (rc < 0)
		PyErr_Clear();
	Py_XDECREF(status);
	Py_XDECREF(headers);
	return rc;
}
*/
import "C"

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// partsScope builds and drops j's scope n times (the executor's thread
// must be idle in its loop; the caller's thread holds the GIL).
func (ex *ASGIExecutor) partsScope(j *Job, n int) error {
	var creq C.m0_request
	fillRequest(&creq, j)
	r := &j.Request
	if C.m0_asgi_parts_scope(ex.c, &creq,
		(*C.char)(unsafe.Pointer(unsafe.SliceData(r.Head))),
		(*C.m0_field)(unsafe.Pointer(unsafe.SliceData(r.Fields))),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(r.RemoteAddr))), C.int(n)) < 0 {
		return errors.New("building the scope failed")
	}
	return nil
}

// partsHead reads a six-field http.response.start into resp n times.
func partsHead(resp *Response, n int) error {
	if C.m0_asgi_parts_head(resp.c, C.int(n)) < 0 {
		return errors.New("reading the head failed")
	}
	return nil
}

// threadCPU is the CPU time of the executor's thread so far, from
// /proc/self/task/<tid>/schedstat (ns; Linux).
func (ex *ASGIExecutor) threadCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(ex.tid) + "/schedstat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("empty schedstat")
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns), err
}
