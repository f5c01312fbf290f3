/*
 * _m0asgi: what asgi_executor.py calls (wake, started, log, log_exception),
 * the executors by id those calls name, and the types an app meets
 * (Request's receive and send, in asgi_request.c, ClientDisconnected, in
 * asgi_conn.c).
 */
#include "asgi.h"

/* The executors, by id: the module's functions are called with one
 * (asgi_executor.c makes and frees them). */
static m0_asgi *executors[M0_ASGI_MAX_EXECUTORS];

m0_asgi *m0_asgi_executor_get(int id)
{
	return id >= 0 && id < M0_ASGI_MAX_EXECUTORS ? executors[id] : NULL;
}

void m0_asgi_executor_set(int id, m0_asgi *ex)
{
	executors[id] = ex;
}

/* wake(executor[, last]): the wake descriptor is readable; the Go side
 * spawns the queued jobs and delivers the finished reads and writes.
 * last: the executor's final call, its tasks cancelled: every op still
 * waiting on the server resumes as failed. */
static PyObject *mod_wake(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs < 1 || nargs > 2)
		return PyErr_Format(PyExc_TypeError, "wake(executor[, last])");
	long id = PyLong_AsLong(args[0]);
	int last = nargs == 2 ? PyObject_IsTrue(args[1]) : 0;
	if (last < 0)
		return NULL;
	m0_asgi *ex = id >= 0 && id < M0_ASGI_MAX_EXECUTORS ? m0_asgi_executor_get((int)id) : NULL;
	if (ex == NULL) {
		if (!PyErr_Occurred())
			PyErr_Format(PyExc_RuntimeError, "no ASGI executor %ld", id);
		return NULL;
	}
	if (m0goASGIWake((int)id, last)) {
		PyObject *r = PyObject_CallMethod(ex->executor, "stop", NULL);
		if (r == NULL)
			return NULL;
		Py_DECREF(r);
	}
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

/* started(executor, error, loop, task_factory): lifespan startup is
 * over. Without a task factory, requests become tasks by asyncio.Task
 * itself (m0_asgi_spawn); with one, through the loop's create_task. */
static PyObject *mod_started(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 4)
		return PyErr_Format(PyExc_TypeError, "started(executor, error, loop, task_factory)");
	long id = PyLong_AsLong(args[0]);
	const char *err = args[1] == Py_None ? NULL : PyUnicode_AsUTF8(args[1]);
	const char *loop = PyUnicode_AsUTF8(args[2]);
	if (PyErr_Occurred())
		return NULL;
	m0_asgi *ex = id >= 0 && id < M0_ASGI_MAX_EXECUTORS ? m0_asgi_executor_get((int)id) : NULL;
	if (ex == NULL)
		return PyErr_Format(PyExc_RuntimeError, "no ASGI executor %ld", id);
	ex->direct_tasks = args[3] == Py_None;
	m0goASGIStarted((int)id, (char *)err, (char *)loop);
	Py_RETURN_NONE;
}

/* log(line): a line through the server's logger. */
static PyObject *mod_log(PyObject *self, PyObject *line)
{
	(void)self;
	Py_ssize_t n;
	const char *text = PyUnicode_AsUTF8AndSize(line, &n);
	if (text == NULL)
		return NULL;
	m0_log("%.*s", (int)(n > 1000 ? 1000 : n), text);
	Py_RETURN_NONE;
}

/* log_exception(exc, context): the shared traceback printer. */
static PyObject *mod_log_exception(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 2 || !PyExceptionInstance_Check(args[0]) || !PyUnicode_Check(args[1]))
		return PyErr_Format(PyExc_TypeError, "log_exception(exc, context)");
	const char *context = PyUnicode_AsUTF8(args[1]);
	if (context == NULL)
		return NULL;
	m0_asgi_raise_again(args[0]);
	m0_log_exception(context);
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"wake", (PyCFunction)(void (*)(void))mod_wake, METH_FASTCALL, NULL},
    {"started", (PyCFunction)(void (*)(void))mod_started, METH_FASTCALL, NULL},
    {"log", mod_log, METH_O, NULL},
    {"log_exception", (PyCFunction)(void (*)(void))mod_log_exception, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_m0asgi",
    .m_doc = "m0serve's ASGI executor primitives", .m_size = -1,
    .m_methods = methods,
};

/* m0_asgi_module_init makes _m0asgi importable (sys.modules), once. */
int m0_asgi_module_init(void)
{
	static int done;
	if (done)
		return 0;
	if (m0_asgi_scope_init() < 0)
		return -1;
	PyObject *m = PyModule_Create(&module);
	if (m == NULL)
		return -1;
	if (m0_asgi_conn_init(m) < 0 || m0_asgi_request_init(m) < 0 || m0_asgi_websocket_init() < 0 || m0_asgi_task_init() < 0) {
		Py_DECREF(m);
		return -1;
	}
	PyObject *modules = PyImport_GetModuleDict(); /* borrowed */
	int rc = PyDict_SetItemString(modules, "_m0asgi", m);
	Py_DECREF(m);
	if (rc == 0)
		done = 1;
	return rc;
}
