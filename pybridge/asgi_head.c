/*
 * The ASGI response head, read through the C API straight into the job's
 * arena: the status int and the (bytes, bytes) pairs never become str
 * (measured: decoding the head to str per request was a fifth of the
 * executor's task run). Field checks are the WSGI head's
 * (m0_field_check); a hop-by-hop field is taken as the WSGI head takes
 * it (m0_hop_by_hop_field): Connection: close honoured, others dropped.
 */
#include "asgi.h"

#include <string.h>

/* bytes_data gives a bytes-like object's bytes: bytes and bytearray, the
 * types ASGI apps use for header names and values. */
static const unsigned char *bytes_data(PyObject *o, Py_ssize_t *n)
{
	if (PyBytes_Check(o)) {
		*n = PyBytes_GET_SIZE(o);
		return (const unsigned char *)PyBytes_AS_STRING(o);
	}
	if (PyByteArray_Check(o)) {
		*n = PyByteArray_GET_SIZE(o);
		return (const unsigned char *)PyByteArray_AS_STRING(o);
	}
	return NULL;
}

int m0_asgi_read_fields(m0_response *r, PyObject *headers, const char *what)
{
	PyObject *seq = PySequence_Fast(headers, "ASGI headers must be an iterable of [name, value] pairs");
	if (seq == NULL)
		return -1;
	Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
	PyObject **items = PySequence_Fast_ITEMS(seq);
	for (Py_ssize_t i = 0; i < count; i++) {
		PyObject *pair = items[i];
		PyObject *name_obj, *value_obj;
		if (PyTuple_CheckExact(pair) && PyTuple_GET_SIZE(pair) == 2) {
			name_obj = PyTuple_GET_ITEM(pair, 0);
			value_obj = PyTuple_GET_ITEM(pair, 1);
		} else if (PyList_CheckExact(pair) && PyList_GET_SIZE(pair) == 2) {
			name_obj = PyList_GET_ITEM(pair, 0);
			value_obj = PyList_GET_ITEM(pair, 1);
		} else {
			PyErr_Format(PyExc_TypeError, "%s %R: want a [name, value] pair of bytes", what, pair);
			goto fail;
		}
		Py_ssize_t nn, vn;
		const unsigned char *name = bytes_data(name_obj, &nn);
		const unsigned char *value = bytes_data(value_obj, &vn);
		if (name == NULL || value == NULL) {
			PyErr_Format(PyExc_TypeError, "%s %R: name and value must be bytes", what, pair);
			goto fail;
		}
		int rc = m0_field_check(name, nn, value, vn);
		if (rc < 0) {
			PyErr_Format(PyExc_ValueError,
			             "%s %R: bad name or a control character (CR, LF, NUL) in it", what, pair);
			goto fail;
		}
		if (rc == 1) {
			if (m0_hop_by_hop_field(r, name, nn, value, vn) < 0) {
				PyErr_NoMemory();
				goto fail;
			}
			continue;
		}
		if (m0_arena_add_header(r, (const char *)name, (size_t)nn, (const char *)value,
		                        (size_t)vn) < 0) {
			PyErr_NoMemory();
			goto fail;
		}
	}
	Py_DECREF(seq);
	return 0;
fail:
	Py_DECREF(seq);
	return -1;
}

/* m0_asgi_read_head: http.response.start. The reason phrase stays empty:
 * ASGI carries none, and the server writes its own (http1.StatusText). */
int m0_asgi_read_head(m0_response *r, PyObject *status, PyObject *headers)
{
	int overflow = 0;
	long code = PyLong_Check(status) ? PyLong_AsLongAndOverflow(status, &overflow) : -1;
	if (code < 100 || code > 999 || overflow) {
		PyErr_Format(PyExc_ValueError, "ASGI status must be an int from 100 to 999, got %R", status);
		return -1;
	}
	m0_response_reset(r);
	r->status = (int32_t)code;
	if (m0_asgi_read_fields(r, headers, "ASGI response header") < 0) {
		m0_response_reset(r);
		return -1;
	}
	r->body.start = r->body.end = (uint32_t)r->len;
	return 0;
}

void m0_asgi_unavailable(m0_response *r)
{
	m0_response_plain(r, 503, "Service Unavailable", 0);
}
