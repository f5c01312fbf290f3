/*
 * The ASGI request object: the C base of asgi_executor.py's Request, whose
 * bound receive and send an app awaits.
 *
 * The common messages are answered here and return a ready awaitable: no
 * coroutine, no Python frame. A measured model of the executor's path (a
 * batch of 16 bare requests on uvloop, Python 3.11) spent 2.5 µs per
 * request with receive and send as coroutines and 2.0 with them answering
 * at once; the asyncio Task and the app's own coroutine are most of the
 * rest. Everything else (a body read that must wait, a streamed body, a
 * write into a full outbox, trailers, pathsend, errors) is the Python
 * half's _receive and _send, coroutines with the whole protocol, which
 * read and write the same state through this type's members.
 *
 * What this changes for an app: send and receive are awaitable callables,
 * as the ASGI spec defines them, but not coroutine functions (as with
 * Granian). `await send(m)` behaves as before; an error in a message is
 * raised by the call, which `await` cannot tell apart;
 * `asyncio.ensure_future(send(m))` works and `asyncio.create_task(send(m))`,
 * which wants a coroutine, does not.
 */
#include "asgi.h"

#include <structmember.h>

enum { START, BODY, TRAILERS, DONE };

typedef struct {
	PyObject_HEAD
	m0_asgi_slot *slot;
	PyObject *executor;
	PyObject *reading, *writing, *gone, *stash;
	int slot_id, send_state;
	char trailers, streaming, body_done, closed;
} m0_asgi_request;

/* ready: an awaitable whose await returns value at once. am_send
 * (Python 3.10) answers an await without a StopIteration; tp_iternext
 * serves `yield from x.__await__()`. */
typedef struct {
	PyObject_HEAD
	PyObject *value;
} m0_ready;

static PyObject *ready_none; /* the one ready awaitable of None */
static PyObject *s_send, *s_receive, *s_close, *k_type, *k_status,
    *k_headers, *k_trailers, *k_body, *k_more_body, *v_start, *v_body,
    *empty_tuple, *empty_bytes;

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

/* ready takes value's reference. */
static PyObject *ready(PyObject *value)
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

static int request_traverse(m0_asgi_request *self, visitproc visit, void *arg)
{
	Py_VISIT(self->executor);
	Py_VISIT(self->reading);
	Py_VISIT(self->writing);
	Py_VISIT(self->gone);
	Py_VISIT(self->stash);
	return 0;
}

static int request_clear(m0_asgi_request *self)
{
	Py_CLEAR(self->executor);
	Py_CLEAR(self->reading);
	Py_CLEAR(self->writing);
	Py_CLEAR(self->gone);
	Py_CLEAR(self->stash);
	return 0;
}

/* The Python half's subclass is a heap type: its own dealloc, which
 * calls this one, drops the reference to the type (a static base must
 * not). */
static void request_dealloc(m0_asgi_request *self)
{
	PyObject_GC_UnTrack(self);
	request_clear(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* is_set: a member the Python half may have set to None. */
static int is_set(PyObject *member)
{
	return member != NULL && member != Py_None;
}

static int is_kind(PyObject *kind, PyObject *want)
{
	return kind == want ||
	       (PyUnicode_CheckExact(kind) && PyUnicode_GET_LENGTH(kind) == PyUnicode_GET_LENGTH(want) &&
	        PyUnicode_Compare(kind, want) == 0);
}

/* truth of message[key], False when absent: 1, 0, or -1 with an error. */
static int flag(PyObject *message, PyObject *key)
{
	PyObject *v = PyDict_GetItemWithError(message, key);
	if (v == NULL)
		return PyErr_Occurred() ? -1 : 0;
	return PyObject_IsTrue(v);
}

/* close: the response is final. A receive waiting for the disconnect is
 * the Python half's (_close resolves its future). */
static int request_close(m0_asgi_request *self)
{
	if (!is_set(self->gone)) {
		self->closed = 1;
		return 0;
	}
	PyObject *r = PyObject_CallMethodNoArgs((PyObject *)self, s_close);
	Py_XDECREF(r);
	return r == NULL ? -1 : 0;
}

/* send_start answers http.response.start: 1 done, 0 not here, -1 error. */
static int send_start(m0_asgi_request *self, PyObject *message)
{
	PyObject *status = PyDict_GetItemWithError(message, k_status);
	if (status == NULL)
		return PyErr_Occurred() ? -1 : 0;
	PyObject *headers = PyDict_GetItemWithError(message, k_headers);
	if (headers == NULL && PyErr_Occurred())
		return -1;
	int trailers = flag(message, k_trailers);
	if (trailers < 0 || m0_asgi_read_head(self->slot->resp, status, headers ? headers : empty_tuple) < 0)
		return -1;
	self->trailers = (char)trailers;
	self->slot->want_trailers = (uint8_t)trailers;
	self->send_state = BODY;
	return 1;
}

/* send_whole answers a body in one message that fits the buffer: 1 done,
 * 0 not here (a streamed body, one to write through the outbox), -1. */
static int send_whole(m0_asgi_request *self, PyObject *message)
{
	int more = flag(message, k_more_body);
	if (more != 0)
		return more < 0 ? -1 : 0;
	PyObject *body = PyDict_GetItemWithError(message, k_body);
	if (body == NULL) {
		if (PyErr_Occurred())
			return -1;
		body = empty_bytes;
	}
	m0_asgi_slot *s = self->slot;
	if (!PyBytes_CheckExact(body) || (s->writer && (size_t)PyBytes_GET_SIZE(body) > s->buffer_limit))
		return 0;
	if (m0_asgi_send_whole(s, body) < 0)
		return -1;
	self->send_state = DONE;
	return request_close(self) < 0 ? -1 : 1;
}

/* owns: the slot is still this request's. A slot is reused once its
 * task has ended, and an app may keep send or receive past that (a task
 * of its own); such a call must not touch the slot's next request. */
static int owns(m0_asgi_request *self)
{
	return self->slot->request == (PyObject *)self;
}

/* send(message): the head, and a body that comes whole, answered here;
 * any other message is the Python half's _send. */
static PyObject *request_send(m0_asgi_request *self, PyObject *message)
{
	if (!self->closed && owns(self) && self->slot->resp != NULL && PyDict_CheckExact(message)) {
		PyObject *kind = PyDict_GetItemWithError(message, k_type);
		int done = 0;
		if (kind != NULL && self->send_state == START && is_kind(kind, v_start))
			done = send_start(self, message);
		else if (kind != NULL && self->send_state == BODY && !self->streaming && !self->trailers &&
		         is_kind(kind, v_body))
			done = send_whole(self, message);
		if (done < 0 || PyErr_Occurred())
			return NULL;
		if (done)
			return Py_NewRef(ready_none);
	}
	return PyObject_CallMethodOneArg((PyObject *)self, s_send, message);
}

/* receive(): the request without a body answered here; a body, a
 * disconnect, the wait after the body are the Python half's _receive. */
static PyObject *request_receive(m0_asgi_request *self, PyObject *unused)
{
	(void)unused;
	m0_asgi_slot *s = self->slot;
	if (!self->body_done && !is_set(self->stash) && !is_set(self->reading) && owns(self) &&
	    !s->body_failed && !s->client_gone &&
	    (!s->has_body || s->body_left == 0 || s->resp == NULL)) {
		s->has_body = 0;
		self->body_done = 1;
		return ready(m0_asgi_request_message(empty_bytes, 0));
	}
	return PyObject_CallMethodNoArgs((PyObject *)self, s_receive);
}

static PyMethodDef request_methods[] = {
    {"send", (PyCFunction)request_send, METH_O, "ASGI send: an awaitable"},
    {"receive", (PyCFunction)request_receive, METH_NOARGS, "ASGI receive: an awaitable"},
    {NULL, NULL, 0, NULL},
};

#define MEMBER(name, type, flags) \
	{#name, type, offsetof(m0_asgi_request, name), flags, NULL}
static PyMemberDef request_members[] = {
    {"slot", T_INT, offsetof(m0_asgi_request, slot_id), READONLY, NULL},
    MEMBER(executor, T_OBJECT, READONLY),
    MEMBER(reading, T_OBJECT, 0),
    MEMBER(writing, T_OBJECT, 0),
    MEMBER(gone, T_OBJECT, 0),
    MEMBER(stash, T_OBJECT, 0),
    MEMBER(send_state, T_INT, 0),
    MEMBER(trailers, T_BOOL, 0),
    MEMBER(streaming, T_BOOL, 0),
    MEMBER(body_done, T_BOOL, 0),
    MEMBER(closed, T_BOOL, 0),
    {NULL, 0, 0, 0, NULL},
};
#undef MEMBER

static PyTypeObject request_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_m0asgi.Request",
    .tp_basicsize = sizeof(m0_asgi_request),
    .tp_dealloc = (destructor)request_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "one ASGI request's state; subclassed by the executor's Request",
    .tp_traverse = (traverseproc)request_traverse,
    .tp_clear = (inquiry)request_clear,
    .tp_methods = request_methods,
    .tp_members = request_members,
};

/* m0_asgi_request_responded: the response is complete (or abandoned). */
int m0_asgi_request_responded(PyObject *request)
{
	return ((m0_asgi_request *)request)->send_state == DONE;
}

/* m0_asgi_request_end: the task is over and the slot goes back: a later
 * send raises and a later receive says http.disconnect, neither looking
 * at the slot. */
int m0_asgi_request_end(PyObject *request)
{
	m0_asgi_request *self = (m0_asgi_request *)request;
	self->send_state = DONE;
	self->body_done = 1;
	return request_close(self);
}

/* m0_asgi_request_new makes an instance of type (the Python half's
 * subclass) for slot, without a Python-level __init__. */
PyObject *m0_asgi_request_new(PyTypeObject *type, PyObject *executor, m0_asgi_slot *slot)
{
	m0_asgi_request *self = (m0_asgi_request *)type->tp_alloc(type, 0);
	if (self == NULL)
		return NULL;
	self->slot = slot;
	self->slot_id = slot->id;
	self->executor = Py_NewRef(executor);
	return (PyObject *)self;
}

/* m0_asgi_request_init readies the types and adds Request to module. */
int m0_asgi_request_init(PyObject *module)
{
	static const m0_interned names[] = {
	    {&s_send, "_send"},
	    {&s_receive, "_receive"},
	    {&s_close, "_close"},
	    {&k_type, "type"},
	    {&k_status, "status"},
	    {&k_headers, "headers"},
	    {&k_trailers, "trailers"},
	    {&k_body, "body"},
	    {&k_more_body, "more_body"},
	    {&v_start, "http.response.start"},
	    {&v_body, "http.response.body"},
	};
	if (M0_INTERN_ALL(names) < 0)
		return -1;
	if ((empty_tuple == NULL && (empty_tuple = PyTuple_New(0)) == NULL) ||
	    (empty_bytes == NULL && (empty_bytes = PyBytes_FromStringAndSize("", 0)) == NULL))
		return -1;
	if (PyType_Ready(&ready_type) < 0 || PyType_Ready(&request_type) < 0 || m0_asgi_task_init() < 0)
		return -1;
	if (ready_none == NULL && (ready_none = ready(Py_NewRef(Py_None))) == NULL)
		return -1;
	return PyModule_AddObjectRef(module, "Request", (PyObject *)&request_type);
}
