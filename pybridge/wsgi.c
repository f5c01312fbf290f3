/*
 * One WSGI request in one call: environ, the app, the response iterable,
 * close(). The head and a buffered body go into the job's arena; a
 * streamed body goes to the Go stream chunk by chunk, with the GIL
 * released while the stream may block.
 */
#include "shim.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static PyObject *s_close; /* "close", interned */

int m0_wsgi_ready(void)
{
	static const m0_interned names[] = {{&s_close, "close"}};
	if (M0_INTERN_ALL(names) < 0 || m0_start_response_ready() < 0 || m0_file_wrapper_ready() < 0)
		return -1;
	return 0;
}

/* stream_sequence sends a list or tuple of bytes through the Go stream,
 * its length known: a body over the job's buffer limit, which the server
 * could not take whole without blocking while the GIL is held. Items are
 * re-read and held per step: another Python thread may change the list
 * while the GIL is released. */
static int stream_sequence(m0_thread *t, PyObject *seq, size_t total)
{
	t->resp->content_length = (int64_t)total;
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
		if (!PyBytes_Check(item)) {
			PyErr_Format(PyExc_TypeError,
			             "the application's body must be bytes, got %.100s",
			             Py_TYPE(item)->tp_name);
			return -1;
		}
		if (PyBytes_GET_SIZE(item) == 0)
			continue;
		Py_INCREF(item);
		int rc = m0_emit(t, item);
		Py_DECREF(item);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int drain(m0_thread *t, PyObject *it, PyObject *result);

static int64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* read_result drains the app's iterable: 0 done, -1 exception, -2 client
 * gone. A list or tuple of bytes is copied in one pass with its length
 * known, unless a streamed head already went out through write(). */
static int read_result(m0_thread *t, PyObject *result)
{
	if ((PyList_CheckExact(result) || PyTuple_CheckExact(result)) &&
	    !t->head_sent) {
		Py_ssize_t n = PySequence_Fast_GET_SIZE(result);
		PyObject **items = PySequence_Fast_ITEMS(result);
		size_t total = 0;
		Py_ssize_t i;
		for (i = 0; i < n && PyBytes_CheckExact(items[i]); i++)
			total += (size_t)PyBytes_GET_SIZE(items[i]);
		/* A list holding a non-bytes item is refused before anything is
		 * sent (a plain 500), rather than after its leading items were
		 * streamed. */
		if (i < n && !PyBytes_Check(items[i])) {
			PyErr_Format(PyExc_TypeError,
			             "the application's body must be bytes, got %.100s",
			             Py_TYPE(items[i])->tp_name);
			return -1;
		}
		if (i == n) {
			if (!t->head_set) {
				PyErr_SetString(PyExc_RuntimeError,
				                "the application returned without calling start_response");
				return -1;
			}
			m0_response *r = t->resp;
			if (t->streaming && !t->committed && total > t->buffer_limit)
				return stream_sequence(t, result, total);
			if (!t->committed && t->gather_limit > 0 && total > t->gather_limit) {
				/* Left whole for a thread with a stream, which sends
				 * it with its length (stream_sequence). */
				Py_INCREF(result);
				r->pending = result;
				return 1;
			}
			if (!t->committed) {
				t->committed = 1;
				r->body.start = r->body.end = (uint32_t)r->len;
			}
			if (m0_arena_reserve(r, total) < 0) {
				PyErr_NoMemory();
				return -1;
			}
			for (i = 0; i < n; i++)
				m0_arena_append(r, PyBytes_AS_STRING(items[i]),
				                (size_t)PyBytes_GET_SIZE(items[i]), NULL);
			r->body.end = (uint32_t)r->len;
			return 0;
		}
	}
	if (Py_TYPE(result) == &m0_FileWrapperType) {
		int rc = m0_file_response(t, result);
		if (rc <= 0)
			return rc;
	}
	PyObject *it = PyObject_GetIter(result);
	if (it == NULL)
		return -1;
	int rc = drain(t, it, result);
	Py_DECREF(it);
	return rc;
}

/* gathered_enough: past the gather limit or the gather time. */
static int gathered_enough(m0_thread *t)
{
	m0_response *r = t->resp;
	if (t->gather_limit > 0 && r->body.end - r->body.start > t->gather_limit)
		return 1;
	return t->gather_until > 0 && monotonic_ns() > t->gather_until;
}

/* drain emits the rest of the iterator: read_result's values, and 1 when
 * the gathered body passed the gather limit with more to come: the
 * iterable and the iterator wait in the arena (M0_SUSPENDED). */
static int drain(m0_thread *t, PyObject *it, PyObject *result)
{
	int rc = 0;
	PyObject *chunk;
	while ((chunk = PyIter_Next(it)) != NULL) {
		if (!PyBytes_Check(chunk)) {
			PyErr_Format(PyExc_TypeError,
			             "the application's body must be bytes, got %.100s",
			             Py_TYPE(chunk)->tp_name);
			rc = -1;
		} else if (PyBytes_GET_SIZE(chunk) > 0) {
			rc = m0_emit(t, chunk);
		}
		Py_DECREF(chunk);
		if (rc < 0)
			break;
		if (!t->streaming && gathered_enough(t)) {
			Py_INCREF(result);
			Py_INCREF(it);
			t->resp->pending = result;
			t->resp->pending_iter = it;
			return 1;
		}
	}
	if (rc == 0 && PyErr_Occurred())
		rc = -1;
	if (rc == 0 && !t->head_set) {
		PyErr_SetString(PyExc_RuntimeError,
		                "the application returned without calling start_response");
		rc = -1;
	}
	return rc;
}

/* log_failure prints the raised exception after a line naming the
 * request: a traceback alone does not say which URL failed. */
static void log_failure(m0_thread *t, const char *context)
{
	char line[232];
	int n = m0_request_line(line, sizeof line, t->head, t->req);
	m0_log_request_exception(line, n, context);
}

/* fail logs the raised exception and records the outcome by the shared
 * policy (failure.c). A client that left, or whose body broke off, is
 * not the app's error: no traceback (the server knows why from
 * Job.BodyErr). */
static void fail(m0_thread *t, const char *context)
{
	int quiet = t->client_gone || t->body_failed;
	if (quiet)
		PyErr_Clear();
	else
		log_failure(t, context);
	m0_response_failed(t->resp, quiet, t->head_sent);
}

/* close_result calls result.close() if it has one. A missing attribute is
 * looked up without raising: a raised-and-cleared AttributeError per
 * request cost more than the rest of the call for a list body. */
static void close_result(m0_thread *t, PyObject *result)
{
	if (PyList_CheckExact(result) || PyTuple_CheckExact(result))
		return;
	PyObject *close = NULL;
#if PY_VERSION_HEX >= 0x030D0000
	int found = PyObject_GetOptionalAttr(result, s_close, &close);
#else
	int found = _PyObject_LookupAttr(result, s_close, &close);
#endif
	if (found <= 0) {
		if (found < 0)
			log_failure(t, "looking up the WSGI response's close() raised");
		return;
	}
	PyObject *r = PyObject_CallNoArgs(close);
	Py_DECREF(close);
	if (r == NULL)
		log_failure(t, "the WSGI response's close() raised");
	Py_XDECREF(r);
}

static void finish(m0_thread *t, int rc, PyObject *result);

/* renew swaps *obj for a fresh one when something beyond the thread still
 * holds it, so a kept object never acts on a later request. */
static int renew(PyObject **obj, PyObject *fresh)
{
	if (fresh == NULL)
		return -1;
	Py_DECREF(*obj);
	*obj = fresh;
	return 0;
}

void m0_wsgi_serve(m0_thread *t, m0_app *app, const m0_request *req,
                   const char *head, const m0_field *fields,
                   const char *remote, m0_response *resp, int mode)
{
	t->generation++;
	t->resp = resp;
	t->req = req;
	t->head = head;
	t->streaming = mode == M0_SERVE_FULL && req->stream;
	t->buffer_limit = req->buffer_limit;
	t->gather_limit = t->streaming ? 0 : req->gather_limit;
	t->gather_until = 0;
	if (!t->streaming && req->gather_us > 0)
		t->gather_until = monotonic_ns() + (int64_t)req->gather_us * 1000;
	t->head_set = t->committed = t->head_sent = t->client_gone = 0;
	t->body_failed = 0;
	m0_response_reset(resp);
	m0_response_trim(resp);
	if ((Py_REFCNT(t->start_response) != 1 &&
	     renew((PyObject **)&t->start_response,
	           (PyObject *)m0_start_response_new(t)) < 0) ||
	    (Py_REFCNT(t->write) != 1 && renew(&t->write, m0_write_new(t)) < 0) ||
	    m0_input_reuse(t, req) < 0) {
		fail(t, "cannot set up a WSGI request");
		return;
	}
	t->start_response->generation = t->generation;
	((m0_start_response *)t->write)->generation = t->generation;

	PyObject *env = m0_environ_build(t, app, req, head, fields, remote);
	if (env == NULL) {
		fail(t, "cannot build the WSGI environ");
		goto out;
	}
	if (mode == M0_SERVE_ENVIRON) {
		Py_DECREF(env);
		resp->outcome = M0_COMPLETE;
		goto out;
	}
	PyObject *args[2] = {env, (PyObject *)t->start_response};
	PyObject *result = PyObject_Vectorcall(app->app, args, 2, NULL);
	Py_DECREF(env);
	if (result == NULL) {
		fail(t, "the WSGI application raised");
		goto out;
	}
	int rc = mode == M0_SERVE_CALL ? 0 : read_result(t, result);
	if (rc == 1) {
		/* Suspended: close() is the resuming thread's to call. */
		Py_DECREF(result);
		resp->content_length = -1;
		resp->outcome = M0_SUSPENDED;
		goto out;
	}
	finish(t, rc, result);
out:
	/* Stale from here: a start_response, write or wsgi.input the app kept
	 * refuses to act. */
	t->generation++;
	t->resp = NULL;
}

/* finish ends a response after its body was read (rc: read_result's):
 * the failure logged, close() called, the outcome set. It takes result. */
static void finish(m0_thread *t, int rc, PyObject *result)
{
	m0_response *resp = t->resp;
	if (rc < 0)
		fail(t, "the WSGI application's response failed");
	close_result(t, result);
	Py_DECREF(result);
	if (rc == 0) {
		if (t->head_sent) {
			resp->outcome = M0_STREAMED;
		} else {
			if (!t->committed)
				resp->body.start = resp->body.end = (uint32_t)resp->len;
			resp->content_length = (int64_t)(resp->body.end - resp->body.start);
			if (resp->file_fd >= 0)
				resp->content_length = resp->file_length;
			resp->outcome = M0_COMPLETE;
		}
	}
}

/* send_gathered sends the head and the body gathered before the
 * suspension: same return values as commit. */
static int send_gathered(m0_thread *t)
{
	m0_response *r = t->resp;
	size_t n = r->body.end - r->body.start;
	if (m0_send_head(t) < 0)
		return -2;
	if (n == 0)
		return 0;
	/* The arena is not written while streaming: the body stays valid. */
	return m0_stream(t, M0_STREAM_WRITE, r->buf + r->body.start, n);
}

void m0_wsgi_resume(m0_thread *t, const m0_request *req, const char *head,
                    m0_response *resp)
{
	PyObject *result = resp->pending, *it = resp->pending_iter;
	resp->pending = resp->pending_iter = NULL;
	t->generation++;
	t->resp = resp;
	t->req = req;
	t->head = head;
	t->streaming = req->stream;
	t->buffer_limit = req->buffer_limit;
	t->gather_limit = 0;
	t->gather_until = 0;
	t->head_set = 1;
	t->head_sent = t->client_gone = t->body_failed = 0;
	resp->outcome = 0;
	int rc;
	if (result == NULL) {
		m0_response_plain(resp, 500, "Internal Server Error", 0);
		goto out;
	}
	if (it == NULL) {
		/* A list or tuple, not yet read: streamed with its length. */
		t->committed = 0;
		rc = read_result(t, result);
	} else {
		t->committed = 1;
		rc = send_gathered(t);
		if (rc == 0)
			rc = drain(t, it, result);
		Py_DECREF(it);
	}
	finish(t, rc, result);
out:
	t->generation++;
	t->resp = NULL;
}
