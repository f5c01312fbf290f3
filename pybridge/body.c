/*
 * A WSGI response body's way out, for the app's iterable (wsgi.c) and its
 * write() callable (start_response.c) alike: the head made final at the
 * first byte, then each piece into the job's arena or, streamed, to the
 * Go stream with the GIL released.
 */
#include "shim.h"

/* m0_stream hands Go one part of a streamed response (op M0_STREAM_HEAD or
 * M0_STREAM_WRITE) with the GIL released, the wait for the client being
 * the stream's. Returns 0, or -2 when the client is gone. The caller keeps
 * p valid meanwhile. */
int m0_stream(m0_thread *t, int op, char *p, size_t n)
{
	int rc, id = t->id;
	Py_BEGIN_ALLOW_THREADS
	rc = m0goStream(id, op, p, n);
	Py_END_ALLOW_THREADS
	if (rc < 0) {
		t->client_gone = 1;
		return -2;
	}
	return 0;
}

/* m0_send_head sends a streamed response's head: 0, or -2 when the client is
 * gone. */
int m0_send_head(m0_thread *t)
{
	if (m0_stream(t, M0_STREAM_HEAD, NULL, 0) < 0)
		return -2;
	t->head_sent = 1;
	return 0;
}

/* commit makes the head final at the first body byte: a streamed head goes
 * out here. Returns -1 with an exception set, -2 when the client is gone. */
static int commit(m0_thread *t)
{
	if (t->committed)
		return 0;
	if (!t->head_set) {
		PyErr_SetString(PyExc_RuntimeError,
		                "the application produced body data before calling start_response");
		return -1;
	}
	t->committed = 1;
	if (!t->streaming) {
		t->resp->body.start = t->resp->body.end = (uint32_t)t->resp->len;
		return 0;
	}
	return m0_send_head(t);
}

/* m0_emit sends one non-empty body chunk: same return values as commit. */
int m0_emit(m0_thread *t, PyObject *chunk)
{
	int rc = commit(t);
	if (rc < 0)
		return rc;
	char *p = PyBytes_AS_STRING(chunk);
	size_t n = (size_t)PyBytes_GET_SIZE(chunk);
	if (!t->streaming) {
		if (m0_arena_append(t->resp, p, n, NULL) < 0) {
			PyErr_NoMemory();
			return -1;
		}
		t->resp->body.end = (uint32_t)t->resp->len;
		return 0;
	}
	/* The chunk stays referenced by the caller while the GIL is released,
	 * and bytes are immutable: p stays valid. */
	return m0_stream(t, M0_STREAM_WRITE, p, n);
}
