/*
 * The plumbing every ASGI connection type shares (m0_asgi_conn): the
 * futures receive and send wait on (loop.create_future()), the one write
 * and the one read a connection may have out on the Go side (the writes
 * of sends made meanwhile queued behind the one out), their resumes, and
 * how a response ends (complete, fail, cancel, release).
 *
 * A slot's life is decided here, in settle, and nowhere else: the Go
 * side holds only what an op out waits on (a body read for Readable, a
 * posted piece for Written), and hands a job back and a slot id out
 * again when settle tells it to. The message rules are each type's own:
 * asgi_request.c for HTTP, asgi_websocket.c for WebSockets.
 *
 * A resume goes from the Go side's wake straight to the future here:
 * no Python frame between the event loop's reader callback and the
 * app's awaiting task.
 */
#include "asgi.h"

#include <stdio.h>

#include <string.h>

PyObject *m0_asgi_client_disconnected;
PyObject *m0_asgi_ready_none;
static PyObject *s_create_future, *s_done, *s_set_result, *s_set_exception;

/* ready: an awaitable whose await returns value at once, for the messages
 * answered without waiting: no future, no coroutine. am_send (Python
 * 3.10) answers an await without a StopIteration; tp_iternext serves
 * `yield from x.__await__()`. */
typedef struct {
	PyObject_HEAD
	PyObject *value;
} m0_ready;

static void ready_dealloc(m0_ready *self)
{
	Py_XDECREF(self->value);
	PyObject_Free(self);
}

static PyObject *ready_await(PyObject *self)
{
	return Py_NewRef(self);
}

static PySendResult ready_send(PyObject *self, PyObject *arg, PyObject **result)
{
	(void)arg;
	*result = Py_NewRef(((m0_ready *)self)->value);
	return PYGEN_RETURN;
}

static PyObject *ready_next(PyObject *self)
{
	PyObject *value = ((m0_ready *)self)->value;
	if (value == Py_None)
		PyErr_SetNone(PyExc_StopIteration);
	else
		PyErr_SetObject(PyExc_StopIteration, value);
	return NULL;
}

static PyAsyncMethods ready_async = {
    .am_await = ready_await,
    .am_send = ready_send,
};

static PyTypeObject ready_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_m0asgi.Ready",
    .tp_basicsize = sizeof(m0_ready),
    .tp_dealloc = (destructor)ready_dealloc,
    .tp_as_async = &ready_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = ready_next,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "an awaitable that is already done",
};

/* m0_asgi_ready takes value's reference. */
PyObject *m0_asgi_ready(PyObject *value)
{
	if (value == NULL)
		return NULL;
	m0_ready *r = PyObject_New(m0_ready, &ready_type);
	if (r == NULL) {
		Py_DECREF(value);
		return NULL;
	}
	r->value = value;
	return (PyObject *)r;
}

/* m0_asgi_conn_start readies c for slot's job and takes the reference the
 * Go slot holds (in_slot): the Go side gives the id out again only once
 * settle has let it go. */
void m0_asgi_conn_start(m0_asgi_conn *c, const m0_asgi_kind *kind, m0_asgi *ex,
                        int slot, const m0_request *req, const char *head,
                        m0_response *resp, int writer)
{
	c->kind = kind;
	c->id = slot;
	c->resp = resp;
	c->loop = Py_NewRef(ex->loop);
	c->writer = (uint8_t)writer;
	c->line_len = m0_request_line(c->line, sizeof c->line, head, req);
	c->in_slot = 1;
	Py_INCREF(c);
}

int m0_asgi_conn_traverse(m0_asgi_conn *c, visitproc visit, void *arg)
{
	Py_VISIT(c->loop);
	Py_VISIT(c->held);
	Py_VISIT(c->write_done);
	Py_VISIT(c->waiters);
	for (uint32_t i = 0; i < c->queue_len; i++) {
		Py_VISIT(c->queue[c->queue_head + i].future);
		Py_VISIT(c->queue[c->queue_head + i].body);
	}
	return 0;
}

void m0_asgi_conn_clear(m0_asgi_conn *c)
{
	Py_CLEAR(c->loop);
	Py_CLEAR(c->held);
	Py_CLEAR(c->write_done);
	Py_CLEAR(c->waiters);
	while (c->queue_len > 0) {
		m0_asgi_queued_write *q = &c->queue[c->queue_head++];
		c->queue_len--;
		Py_CLEAR(q->future);
		Py_CLEAR(q->body);
	}
	PyMem_Free(c->queue);
	c->queue = NULL;
	c->queue_head = c->queue_cap = 0;
}

/* settle is the one place a slot's life moves on, once no read or write
 * of c is out (an op's resume comes back to this slot): a final response
 * hands the job back (m0goASGIComplete), then an ended task gives the
 * slot id back (m0goASGIFree) and the Go slot's reference with it. A caller whose
 * c may have ended calls it last. */
static void settle(m0_asgi_conn *c)
{
	if (c->reading || c->writing)
		return;
	if (c->handing_back) {
		c->handing_back = 0;
		m0goASGIComplete(c->id);
	}
	if (c->ended && c->in_slot) {
		c->in_slot = 0;
		m0goASGIFree(c->id);
		Py_DECREF(c);
	}
}

static PyObject *new_future(m0_asgi_conn *c)
{
	return PyObject_CallMethodNoArgs(c->loop, s_create_future);
}

/* settle_future sets fut's result (or, with exc, its exception) unless
 * it is done already (the task awaiting it was cancelled): 0, or -1. */
static int settle_future(PyObject *fut, PyObject *value, PyObject *exc)
{
	PyObject *done = PyObject_CallMethodNoArgs(fut, s_done);
	if (done == NULL)
		return -1;
	int is_done = PyObject_IsTrue(done);
	Py_DECREF(done);
	if (is_done != 0)
		return is_done < 0 ? -1 : 0;
	PyObject *r = exc ? PyObject_CallMethodOneArg(fut, s_set_exception, exc)
	                  : PyObject_CallMethodOneArg(fut, s_set_result, value);
	Py_XDECREF(r);
	return r == NULL ? -1 : 0;
}

/* m0_asgi_wait: a new future for a receive that must wait, queued behind
 * the receives waiting already. */
PyObject *m0_asgi_wait(m0_asgi_conn *c)
{
	if (c->waiters == NULL && (c->waiters = PyList_New(0)) == NULL)
		return NULL;
	PyObject *fut = new_future(c);
	if (fut != NULL && PyList_Append(c->waiters, fut) < 0)
		Py_CLEAR(fut);
	return fut;
}

/* m0_asgi_deliver gives message to the oldest receive still waiting: 1,
 * 0 when none waits (a cancelled receive's future is passed over), -1. */
int m0_asgi_deliver(m0_asgi_conn *c, PyObject *message)
{
	while (c->waiters != NULL && PyList_GET_SIZE(c->waiters) > 0) {
		PyObject *fut = Py_NewRef(PyList_GET_ITEM(c->waiters, 0));
		if (PyList_SetSlice(c->waiters, 0, 1, NULL) < 0) {
			Py_DECREF(fut);
			return -1;
		}
		PyObject *done = PyObject_CallMethodNoArgs(fut, s_done);
		int is_done = done ? PyObject_IsTrue(done) : -1;
		Py_XDECREF(done);
		int rc = is_done ? 0 : settle_future(fut, message, NULL);
		Py_DECREF(fut);
		if (is_done < 0 || rc < 0)
			return -1;
		if (!is_done)
			return 1;
	}
	return 0;
}

/* m0_asgi_deliver_error raises the error set in the oldest receive still
 * waiting (a message for it could not be made): 1 when one took it, 0
 * when none waits (the error is left set), -1. */
int m0_asgi_deliver_error(m0_asgi_conn *c)
{
	PyObject *exc = m0_fetch_exception();
	while (exc != NULL && c->waiters != NULL && PyList_GET_SIZE(c->waiters) > 0) {
		PyObject *fut = Py_NewRef(PyList_GET_ITEM(c->waiters, 0));
		if (PyList_SetSlice(c->waiters, 0, 1, NULL) < 0) {
			Py_DECREF(fut);
			Py_DECREF(exc);
			return -1;
		}
		PyObject *done = PyObject_CallMethodNoArgs(fut, s_done);
		int is_done = done ? PyObject_IsTrue(done) : -1;
		Py_XDECREF(done);
		int rc = is_done ? 0 : settle_future(fut, NULL, exc);
		Py_DECREF(fut);
		if (is_done < 0 || rc < 0) {
			Py_DECREF(exc);
			return -1;
		}
		if (!is_done) {
			Py_DECREF(exc);
			return 1;
		}
	}
	m0_restore_exception(exc);
	return 0;
}

/* m0_asgi_deliver_all gives message to every waiting receive. */
int m0_asgi_deliver_all(m0_asgi_conn *c, PyObject *message)
{
	PyObject *waiters = c->waiters;
	if (waiters == NULL)
		return 0;
	c->waiters = NULL;
	int rc = 0;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(waiters); i++)
		if (settle_future(PyList_GET_ITEM(waiters, i), message, NULL) < 0)
			rc = -1;
	Py_DECREF(waiters);
	return rc;
}

/* m0_asgi_has_waiter: a receive waits (a cancelled one does not count). */
int m0_asgi_has_waiter(m0_asgi_conn *c)
{
	if (c->waiters == NULL)
		return 0;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(c->waiters); i++) {
		PyObject *done = PyObject_CallMethodNoArgs(PyList_GET_ITEM(c->waiters, i), s_done);
		if (done == NULL)
			return -1;
		int is_done = PyObject_IsTrue(done);
		Py_DECREF(done);
		if (is_done <= 0)
			return is_done < 0 ? -1 : 1;
	}
	return 0;
}

/* m0_asgi_read asks the Go side for the next body piece; it comes back
 * through kind->read. */
void m0_asgi_read(m0_asgi_conn *c)
{
	c->reading = 1;
	m0goASGIRead(c->id);
}

void m0_asgi_resume_read(m0_asgi_conn *c, const char *p, long n)
{
	if (c == NULL)
		return;
	c->reading = 0;
	if (!c->ended) {
		c->kind->read(c, p, n);
		if (PyErr_Occurred()) {
			m0_asgi_log_exception(c, "delivering an ASGI request body piece failed");
		}
	}
	settle(c);
}

/* The writes of a connection go out one at a time, in call order: the
 * Go side posts the held bytes (the loop copies them), at once when the
 * output has room, else resuming once it has. A send made while a write
 * is out (two tasks sending at once: a broadcast, a stream fed by two
 * producers) waits in the queue, and its future completes after the
 * earlier ones'. A lone send allocates nothing here. */

static PyObject *start_write(m0_asgi_conn *c, PyObject *body, m0_response *trailers, int message);

/* m0_asgi_write hands body (bytes, or NULL) and trailers (or NULL) to the
 * Go side's port, the head first when it has not gone out, and returns
 * what the send awaits (start_write): done, or a future its resume
 * settles, body held till then. */
PyObject *m0_asgi_write(m0_asgi_conn *c, PyObject *body, m0_response *trailers)
{
	return start_write(c, body, trailers, -1);
}

/* m0_asgi_write_message hands a WebSocket message (payload: bytes) to the
 * Go side, as m0_asgi_write a body piece. */
PyObject *m0_asgi_write_message(m0_asgi_conn *c, PyObject *payload, int binary)
{
	return start_write(c, payload, NULL, binary != 0);
}

/* hand_out gives a write to the Go side: 1 when its port took it at
 * once (the output had room: the common case), and nothing is out; 0 when
 * it is out until its resume, body (a new reference, or NULL) held till
 * then. */
static int hand_out(m0_asgi_conn *c, PyObject *body, m0_response *trailers, int message)
{
	c->writing = 1;
	c->held = body;
	const char *p = body ? PyBytes_AS_STRING(body) : NULL;
	size_t n = body ? (size_t)PyBytes_GET_SIZE(body) : 0;
	int done;
	if (message >= 0) {
		done = m0goASGIWSSend(c->id, message, (char *)p, n);
	} else {
		int head = !c->head_sent;
		c->head_sent = 1;
		done = m0goASGIWrite(c->id, head, (char *)p, n, trailers);
	}
	if (done) {
		c->writing = 0;
		Py_CLEAR(c->held);
	}
	return done;
}

/* enqueue keeps a write that must wait for the one out: 0, or -1. */
static int enqueue(m0_asgi_conn *c, PyObject *fut, PyObject *body, m0_response *trailers,
                   int message)
{
	if (c->queue_head + c->queue_len == c->queue_cap) {
		if (c->queue_head > 0) {
			memmove(c->queue, c->queue + c->queue_head, c->queue_len * sizeof *c->queue);
			c->queue_head = 0;
		} else {
			uint32_t cap = c->queue_cap ? c->queue_cap * 2 : 4;
			m0_asgi_queued_write *q = PyMem_Realloc(c->queue, cap * sizeof *q);
			if (q == NULL) {
				PyErr_NoMemory();
				return -1;
			}
			c->queue = q;
			c->queue_cap = cap;
		}
	}
	c->queue[c->queue_head + c->queue_len++] = (m0_asgi_queued_write){
	    .future = Py_NewRef(fut),
	    .body = Py_XNewRef(body),
	    .trailers = trailers,
	    .message = (int8_t)message,
	};
	return 0;
}

/* dequeue takes the oldest queued write; the caller owns its references. */
static m0_asgi_queued_write dequeue(m0_asgi_conn *c)
{
	m0_asgi_queued_write q = c->queue[c->queue_head++];
	if (--c->queue_len == 0)
		c->queue_head = 0;
	return q;
}

/* start_write hands a write out, or queues it behind the one out, and
 * returns what the send awaits: done already when the port took it at
 * once (no future: the task goes on without a turn of the event loop, as
 * a transport's write does), else the future its resume settles. */
static PyObject *start_write(m0_asgi_conn *c, PyObject *body, m0_response *trailers, int message)
{
	if (c->client_gone) {
		PyErr_SetString(m0_asgi_client_disconnected, "the client is gone");
		return NULL;
	}
	if (c->writing) {
		PyObject *fut = new_future(c);
		if (fut != NULL && enqueue(c, fut, body, trailers, message) < 0)
			Py_CLEAR(fut);
		return fut;
	}
	if (hand_out(c, Py_XNewRef(body), trailers, message))
		return Py_NewRef(m0_asgi_ready_none);
	/* Out: its resume settles the future (none, should making it fail:
	 * the send raises, the write goes on). */
	c->write_done = new_future(c);
	return Py_XNewRef(c->write_done);
}

/* next_writes hands the queued writes out in call order: each the port
 * takes at once has its send settled here and the next goes; one left
 * out waits for its resume. With none out, kind->written. */
static void next_writes(m0_asgi_conn *c)
{
	while (c->queue_len > 0) {
		m0_asgi_queued_write q = dequeue(c);
		if (!hand_out(c, q.body, q.trailers, q.message)) {
			c->write_done = q.future;
			return;
		}
		if (settle_future(q.future, Py_None, NULL) < 0)
			m0_asgi_log_exception(c, "resuming an ASGI send failed");
		Py_DECREF(q.future);
	}
	c->kind->written(c);
	if (PyErr_Occurred())
		m0_asgi_log_exception(c, "ending an ASGI write failed");
}

/* fail_queued fails every queued write's send with ClientDisconnected:
 * the connection is gone. 0, or -1 with an error set. */
static int fail_queued(m0_asgi_conn *c)
{
	int rc = 0;
	while (c->queue_len > 0) {
		m0_asgi_queued_write q = dequeue(c);
		PyObject *exc = PyObject_CallFunction(m0_asgi_client_disconnected, "s", "the client is gone");
		if (exc == NULL || settle_future(q.future, NULL, exc) < 0)
			rc = -1;
		Py_XDECREF(exc);
		Py_DECREF(q.future);
		Py_XDECREF(q.body);
	}
	return rc;
}

void m0_asgi_resume_write(m0_asgi_conn *c, int rc)
{
	if (c == NULL)
		return;
	Py_CLEAR(c->held);
	c->writing = 0;
	PyObject *fut = c->write_done;
	c->write_done = NULL;
	/* Settled after the task's end too: a task of the app's own may
	 * still await it. A hook's own failure is logged and settles
	 * nothing: the send is resumed all the same, or its task would wait
	 * for ever. */
	int failed = 0;
	if (rc < 0) {
		c->client_gone = 1;
		if (!c->ended)
			c->kind->gone(c);
		if (PyErr_Occurred())
			m0_asgi_log_exception(c, "ending an ASGI write failed");
		PyObject *exc = PyObject_CallFunction(m0_asgi_client_disconnected, "s", "the client is gone");
		failed = exc == NULL || (fut != NULL && settle_future(fut, NULL, exc) < 0);
		Py_XDECREF(exc);
		if (fail_queued(c) < 0)
			failed = 1;
	} else {
		failed = fut != NULL && settle_future(fut, Py_None, NULL) < 0;
	}
	if (failed) {
		m0_asgi_log_exception(c, "resuming an ASGI send failed");
	}
	Py_XDECREF(fut);
	/* The queued writes go out now, whose sends learn of their resumes
	 * in turn: a disconnect seen meanwhile fails them there. */
	if (rc >= 0)
		next_writes(c);
	settle(c);
}

/* m0_asgi_client_gone: the server saw the connection close. A body read
 * under way still ends by itself (the reader fails); the request learns
 * of it now. */
void m0_asgi_client_gone(m0_asgi_conn *c)
{
	if (c == NULL || c->ended)
		return;
	c->client_gone = 1;
	c->kind->gone(c);
	if (PyErr_Occurred()) {
		m0_asgi_log_exception(c, "telling an ASGI request its client left failed");
	}
}

/* m0_asgi_input_ended: the client ended its side of the connection; it
 * may still read, so the response goes on. */
void m0_asgi_input_ended(m0_asgi_conn *c)
{
	if (c == NULL || c->ended || c->input_ended)
		return;
	c->input_ended = 1;
	c->kind->input_ended(c);
	if (PyErr_Occurred())
		m0_asgi_log_exception(c, "telling an ASGI request its client ended its input failed");
}

/* m0_asgi_is_kind: a message's type is want (interned: the common case
 * is the same object). */
int m0_asgi_is_kind(PyObject *kind, PyObject *want)
{
	return kind == want ||
	       (PyUnicode_Check(kind) && PyUnicode_GET_LENGTH(kind) == PyUnicode_GET_LENGTH(want) &&
	        PyUnicode_Compare(kind, want) == 0);
}

/* m0_asgi_get: message[key] (a new reference), or fallback's when absent
 * (NULL fallback: KeyError); NULL with an error set. A message is any
 * mapping, a dict the fast case; what is no mapping raises as
 * subscripting it does (TypeError), for every connection type alike. */
PyObject *m0_asgi_get(PyObject *message, PyObject *key, PyObject *fallback)
{
	PyObject *v;
	if (PyDict_CheckExact(message)) {
		v = PyDict_GetItemWithError(message, key);
		if (v != NULL)
			return Py_NewRef(v);
		if (PyErr_Occurred())
			return NULL;
	} else {
		v = PyObject_GetItem(message, key);
		if (v != NULL || !PyErr_ExceptionMatches(PyExc_KeyError))
			return v;
		PyErr_Clear();
	}
	if (fallback == NULL)
		PyErr_SetObject(PyExc_KeyError, key);
	return Py_XNewRef(fallback);
}

/* m0_asgi_as_bytes: bytes as they are (immutable: safe to read without
 * the GIL), any other buffer copied into bytes. */
PyObject *m0_asgi_as_bytes(PyObject *body)
{
	if (PyBytes_CheckExact(body))
		return Py_NewRef(body);
	PyObject *b = PyBytes_FromObject(body);
	if (b == NULL) {
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "ASGI body must be bytes, got %.100s",
		             Py_TYPE(body)->tp_name);
	}
	return b;
}

/* m0_asgi_live: the job is still attached, else 0 with an error set. */
int m0_asgi_live(m0_asgi_conn *c)
{
	if (c->resp != NULL)
		return 1;
	PyErr_SetString(PyExc_RuntimeError, "ASGI send after the response was complete");
	return 0;
}

/* m0_asgi_complete: the response is final. The job goes back once no
 * read or write is out (settle): until then an op's resume names it. */
void m0_asgi_complete(m0_asgi_conn *c)
{
	if (c->resp == NULL)
		return;
	c->resp = NULL;
	c->handing_back = 1;
	settle(c);
}

/* m0_asgi_log_exception is m0_log_exception with the request's line
 * first on the logged line: a traceback alone does not say which URL
 * failed. */
void m0_asgi_log_exception(m0_asgi_conn *c, const char *context)
{
	m0_log_request_exception(c->line, c->line_len, context);
}

/* m0_asgi_raise_again sets exc as the error being handled. */
void m0_asgi_raise_again(PyObject *exc)
{
	m0_restore_exception(Py_NewRef(exc));
}

/* m0_asgi_fail: the app raised exc, or returned without ending its
 * response (exc NULL). A 500 while nothing went out, an abort after; a
 * client that left is not the app's error (no traceback). An error after
 * the response was complete (a background task) is logged only. The
 * policy is failure.c's, shared with WSGI. */
void m0_asgi_fail(m0_asgi_conn *c, PyObject *exc, const char *context)
{
	int quiet = c->client_gone || c->read_failed;
	c->app_failed = 1;
	if (!quiet) {
		if (exc != NULL && PyExceptionInstance_Check(exc)) {
			m0_asgi_raise_again(exc);
			m0_asgi_log_exception(c, context);
		} else {
			m0_log_error("m0serve: %.*s: %s", c->line_len, c->line, context);
		}
	}
	if (c->resp != NULL) {
		m0_response_failed(c->resp, quiet, c->head_sent);
		m0_asgi_complete(c);
	}
}

/* m0_asgi_cancel: the shutdown cancelled the task. */
void m0_asgi_cancel(m0_asgi_conn *c)
{
	if (c->resp != NULL) {
		if (c->head_sent)
			c->resp->outcome = M0_ABORTED;
		else
			m0_asgi_unavailable(c->resp);
		m0_asgi_complete(c);
	}
}

/* m0_asgi_release: the task ended. The connection takes no message after
 * (kind->end) and the slot goes back to the Go side; 0, or -1 with an
 * exception set when ending the connection failed (the slot goes back
 * all the same). The caller holds a reference to c. */
int m0_asgi_release(m0_asgi_conn *c)
{
	if (c->ended)
		return 0;
	if (c->resp != NULL) {
		m0_response_plain(c->resp, 500, "Internal Server Error", 1);
		m0_asgi_complete(c);
	}
	c->ended = 1;
	int rc = c->kind->end(c);
	settle(c);
	return rc;
}

/* m0_asgi_conn_init readies the shared types and names and adds
 * ClientDisconnected to module. */
int m0_asgi_conn_init(PyObject *module)
{
	static const m0_interned names[] = {
	    {&s_create_future, "create_future"},
	    {&s_done, "done"},
	    {&s_set_result, "set_result"},
	    {&s_set_exception, "set_exception"},
	};
	if (M0_INTERN_ALL(names) < 0 || PyType_Ready(&ready_type) < 0)
		return -1;
	if (m0_asgi_ready_none == NULL && (m0_asgi_ready_none = m0_asgi_ready(Py_NewRef(Py_None))) == NULL)
		return -1;
	/* The ASGI spec has send raise a server-specific subclass of OSError
	 * once the client has gone. */
	if (m0_asgi_client_disconnected == NULL &&
	    (m0_asgi_client_disconnected = PyErr_NewExceptionWithDoc(
	         "_m0asgi.ClientDisconnected", "send() after the client went away", PyExc_OSError, NULL)) == NULL)
		return -1;
	return PyModule_AddObjectRef(module, "ClientDisconnected", m0_asgi_client_disconnected);
}
