/*
 * The coroutine a request's asyncio Task runs: the app's awaitable, and
 * what the executor does when it ends. It is the C form of
 *
 *     try:
 *         await app(scope, request.receive, request.send)
 *     except CancelledError:      -> 503, or an abort once the head went
 *     except BaseException:       -> 500 and a traceback, or an abort
 *     else: no complete response  -> 500
 *     finally: the response is final, the slot goes back
 *
 * without a Python frame around the app's: the Task steps it through
 * am_send (PyIter_Send, Python 3.10), which passes each step straight to
 * the app's coroutine, or to the iterator of any other awaitable the app
 * returned (its __await__). This is the one place the settle-on-exit
 * rules live.
 *
 * It is a collections.abc.Coroutine (it has __await__, send, throw and
 * close), which is what asyncio.Task asks of what it runs.
 */
#include "asgi.h"

typedef struct {
	PyObject_HEAD
	PyObject *request; /* the m0_asgi_conn it settles */
	PyObject *app;     /* the app's coroutine, or its awaitable's iterator */
	char ended;
} m0_asgi_task_coro;

static PyObject *cancelled_error; /* asyncio.CancelledError */

/* settle: the app is over, with an exception set when failed. Settles
 * the response and clears the exception; -1 only when ending the request itself failed. */
static int settle(PyObject *request, int failed)
{
	m0_asgi_conn *c = (m0_asgi_conn *)request;
	if (failed) {
		PyObject *value = m0_fetch_exception();
		if (value != NULL && PyErr_GivenExceptionMatches(value, cancelled_error))
			m0_asgi_cancel(c);
		else
			m0_asgi_fail(c, value, "the ASGI application raised");
		Py_XDECREF(value);
	} else if (!c->kind->responded(c)) {
		m0_asgi_fail(c, NULL, "the ASGI application returned without completing its response");
	}
	return m0_asgi_release(c);
}

static int end(m0_asgi_task_coro *self, int failed)
{
	self->ended = 1;
	return settle(self->request, failed);
}

static PySendResult run_send(PyObject *op, PyObject *arg, PyObject **result)
{
	m0_asgi_task_coro *self = (m0_asgi_task_coro *)op;
	if (self->ended) {
		PyErr_SetString(PyExc_RuntimeError, "cannot reuse already awaited ASGI request");
		*result = NULL;
		return PYGEN_ERROR;
	}
	PySendResult status = PyIter_Send(self->app, arg, result);
	if (status == PYGEN_NEXT)
		return status;
	if (status == PYGEN_RETURN)
		Py_CLEAR(*result);
	if (end(self, status == PYGEN_ERROR) < 0) {
		*result = NULL;
		return PYGEN_ERROR;
	}
	*result = Py_NewRef(Py_None);
	return PYGEN_RETURN;
}

/* as_call gives a step's outcome to a Python caller of send or throw: a
 * PYGEN_RETURN is a StopIteration. */
static PyObject *as_call(PySendResult status, PyObject *result)
{
	if (status != PYGEN_RETURN)
		return result;
	if (result == Py_None)
		PyErr_SetNone(PyExc_StopIteration);
	else
		PyErr_SetObject(PyExc_StopIteration, result);
	Py_DECREF(result);
	return NULL;
}

static PyObject *run_send_method(PyObject *self, PyObject *arg)
{
	PyObject *result;
	PySendResult status = run_send(self, arg, &result);
	return as_call(status, result);
}

static PyObject *run_next(PyObject *self)
{
	return run_send_method(self, Py_None);
}

/* throw(...): what the Task throws in (a cancellation), passed to the
 * app's coroutine. */
static PyObject *run_throw(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
	m0_asgi_task_coro *self = (m0_asgi_task_coro *)op;
	if (self->ended) {
		/* As a finished coroutine does: the exception comes back out. */
		if (nargs == 1 && PyExceptionInstance_Check(args[0]))
			PyErr_SetObject((PyObject *)Py_TYPE(args[0]), args[0]);
		else
			PyErr_SetString(PyExc_RuntimeError, "ASGI request already ended");
		return NULL;
	}
	PyObject *throw = PyObject_GetAttrString(self->app, "throw");
	PyObject *yielded = NULL;
	if (throw != NULL) {
		yielded = PyObject_Vectorcall(throw, args, (size_t)nargs, NULL);
		Py_DECREF(throw);
		if (yielded != NULL)
			return yielded;
	} else if (PyErr_ExceptionMatches(PyExc_AttributeError) && nargs == 1 &&
	           PyExceptionInstance_Check(args[0])) {
		/* An iterator without throw: the exception ends it. */
		PyErr_Clear();
		PyErr_SetObject((PyObject *)Py_TYPE(args[0]), args[0]);
	}
	int failed = 1;
	if (PyErr_ExceptionMatches(PyExc_StopIteration)) {
		PyErr_Clear();
		failed = 0;
	}
	if (end(self, failed) < 0)
		return NULL;
	return as_call(PYGEN_RETURN, Py_NewRef(Py_None));
}

/* close(): the task is being destroyed unfinished; the app's coroutine
 * closes (its finally clauses run) and the request ends as a
 * cancellation does. */
static PyObject *run_close(PyObject *op, PyObject *unused)
{
	(void)unused;
	m0_asgi_task_coro *self = (m0_asgi_task_coro *)op;
	if (self->ended)
		Py_RETURN_NONE;
	PyObject *r = PyObject_CallMethod(self->app, "close", NULL);
	PyObject *raised = NULL;
	if (r == NULL && PyErr_ExceptionMatches(PyExc_AttributeError))
		PyErr_Clear(); /* an iterator without close */
	else if (r == NULL)
		/* The app's coroutine ignored GeneratorExit: still cancel and
		 * release, or the client waits for ever; the error is the
		 * caller's after. */
		raised = m0_fetch_exception();
	Py_XDECREF(r);
	self->ended = 1;
	m0_asgi_conn *c = (m0_asgi_conn *)self->request;
	m0_asgi_cancel(c);
	int rc = m0_asgi_release(c);
	if (raised != NULL) {
		if (rc < 0)
			m0_asgi_log_exception(c, "ending an ASGI request failed");
		m0_restore_exception(raised);
		return NULL;
	}
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *run_await(PyObject *self)
{
	return Py_NewRef(self);
}

static int run_traverse(m0_asgi_task_coro *self, visitproc visit, void *arg)
{
	Py_VISIT(self->request);
	Py_VISIT(self->app);
	return 0;
}

static int run_clear(m0_asgi_task_coro *self)
{
	Py_CLEAR(self->request);
	Py_CLEAR(self->app);
	return 0;
}

/* run_finalize: a task dropped unfinished closes as a coroutine would.
 * A finaliser (PEP 442), not the dealloc: the collector runs finalisers
 * before it clears a cycle (a task waiting on a future only it holds),
 * and a cleared one has no request left to settle. */
static void run_finalize(PyObject *op)
{
	m0_asgi_task_coro *self = (m0_asgi_task_coro *)op;
	if (self->ended || self->app == NULL || self->request == NULL)
		return;
	PyObject *raised = m0_fetch_exception();
	PyObject *r = run_close(op, NULL);
	if (r == NULL)
		PyErr_WriteUnraisable(op);
	Py_XDECREF(r);
	m0_restore_exception(raised);
}

static void run_dealloc(m0_asgi_task_coro *self)
{
	if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0)
		return; /* resurrected */
	PyObject_GC_UnTrack(self);
	run_clear(self);
	PyObject_GC_Del(self);
}

static PyAsyncMethods run_async = {
    .am_await = run_await,
    .am_send = run_send,
};

static PyMethodDef run_methods[] = {
    {"send", run_send_method, METH_O, NULL},
    {"throw", (PyCFunction)(void (*)(void))run_throw, METH_FASTCALL, NULL},
    {"close", run_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject run_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_m0asgi.RequestRun",
    .tp_basicsize = sizeof(m0_asgi_task_coro),
    .tp_dealloc = (destructor)run_dealloc,
    .tp_finalize = run_finalize,
    .tp_as_async = &run_async,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "the coroutine of one ASGI request's task",
    .tp_traverse = (traverseproc)run_traverse,
    .tp_clear = (inquiry)run_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = run_next,
    .tp_methods = run_methods,
};

int m0_asgi_is_task_coro(PyObject *op)
{
	return Py_IS_TYPE(op, &run_type);
}

/* m0_asgi_task_coro_new wraps what the app returned for request's task:
 * a coroutine as it is, another awaitable by its __await__ iterator.
 * NULL with an error set when it is not awaitable. */
PyObject *m0_asgi_task_coro_new(PyObject *request, PyObject *app_awaitable)
{
	PyObject *it;
	if (PyCoro_CheckExact(app_awaitable)) {
		it = Py_NewRef(app_awaitable);
	} else {
		unaryfunc getter = Py_TYPE(app_awaitable)->tp_as_async ? Py_TYPE(app_awaitable)->tp_as_async->am_await : NULL;
		if (getter == NULL)
			return PyErr_Format(PyExc_TypeError, "the ASGI application returned %.100s, which is not awaitable",
			                    Py_TYPE(app_awaitable)->tp_name);
		it = getter(app_awaitable);
		if (it == NULL)
			return NULL;
		if (!PyIter_Check(it)) {
			Py_DECREF(it);
			return PyErr_Format(PyExc_TypeError, "__await__() of %.100s returned a non-iterator",
			                    Py_TYPE(app_awaitable)->tp_name);
		}
	}
	m0_asgi_task_coro *self = PyObject_GC_New(m0_asgi_task_coro, &run_type);
	if (self == NULL) {
		Py_DECREF(it);
		return NULL;
	}
	self->request = Py_NewRef(request);
	self->app = it;
	self->ended = 0;
	PyObject_GC_Track(self);
	return (PyObject *)self;
}

/* m0_asgi_app_raised ends a request whose app raised when called, before
 * there was a coroutine to run: as if its first step had. */
void m0_asgi_app_raised(PyObject *request)
{
	if (settle(request, 1) < 0) {
		m0_asgi_log_exception((m0_asgi_conn *)request, "ending the ASGI request failed");
	}
}

int m0_asgi_task_init(void)
{
	if (PyType_Ready(&run_type) < 0)
		return -1;
	if (cancelled_error == NULL) {
		PyObject *asyncio = PyImport_ImportModule("asyncio");
		if (asyncio == NULL)
			return -1;
		cancelled_error = PyObject_GetAttrString(asyncio, "CancelledError");
		Py_DECREF(asyncio);
		if (cancelled_error == NULL)
			return -1;
	}
	return 0;
}
