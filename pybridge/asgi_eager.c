/*
 * A request's first step, run eagerly on Python 3.10 and 3.11.
 *
 * From 3.12 asyncio.Task(eager_start=True) runs a task's first step in
 * its constructor (asgi_executor.c asks for it): an app that answers
 * without suspending never has its task queued, handled by the loop's
 * iteration and stepped from there. Before 3.12 the constructor always
 * hands its first step to loop.call_soon, a Python method that builds a
 * Handle for the loop's next iteration to run. Here the loop object
 * gets a call_soon attribute of its own that, while m0_asgi_spawn
 * constructs a task (armed), runs that step at once, in the task's
 * context, as 3.12 does; every other call goes to the loop's method.
 *
 * The step still runs inside a real Task (asyncio.current_task() is the
 * request's, cancellation works as ever); unlike 3.12, all_tasks() does
 * not list the task during its first step. It saves server CPU per
 * request at every concurrency measured (bench/README, "Figures behind the comments").
 */
#include "asgi.h"

#if PY_VERSION_HEX < 0x030C0000

#define EAGER_CAPSULE "m0serve.eager_start"

typedef struct {
	PyObject *call_soon; /* the loop's own, bound */
	int armed;           /* the next call is a new task's first step */
} eager_start;

static void eager_free(PyObject *capsule)
{
	eager_start *e = PyCapsule_GetPointer(capsule, EAGER_CAPSULE);
	if (e == NULL) {
		PyErr_Clear();
		return;
	}
	Py_XDECREF(e->call_soon);
	PyMem_Free(e);
}

/* run_step calls a task's first step inside its context, as
 * Handle._run would. */
static PyObject *run_step(PyObject *step, PyObject *context)
{
	if (PyContext_Enter(context) < 0)
		return NULL;
	PyObject *r = PyObject_CallNoArgs(step);
	PyObject *raised = m0_fetch_exception();
	if (PyContext_Exit(context) < 0) {
		Py_XDECREF(raised);
		Py_XDECREF(r);
		return NULL;
	}
	m0_restore_exception(raised);
	if (r == NULL)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_NONE;
}

static PyObject *eager_call_soon(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	eager_start *e = PyCapsule_GetPointer(self, EAGER_CAPSULE);
	if (e == NULL)
		return NULL;
	/* Task's constructor calls call_soon(step, context=ctx). */
	if (e->armed && nargs == 1 && kwnames != NULL && PyTuple_GET_SIZE(kwnames) == 1 &&
	    PyContext_CheckExact(args[1])) {
		e->armed = 0;
		return run_step(args[0], args[1]);
	}
	return PyObject_Vectorcall(e->call_soon, args, nargs, kwnames);
}

static PyMethodDef eager_def = {
    "call_soon", (PyCFunction)(void (*)(void))eager_call_soon, METH_FASTCALL | METH_KEYWORDS,
    "the loop's call_soon; runs a new request task's first step at once"};

/* register_pending is the add of the WeakSet asyncio lists its tasks in
 * (asyncio.tasks._all_tasks), given to that set as an instance attribute,
 * which a method lookup finds before the class's. Task's constructor
 * registers a task after its first step has been handed to call_soon, so
 * a request that an eager first step answered is registered done. Such a
 * task is one all_tasks() never lists (it lists pending tasks only), yet
 * its registration costs a weakref, a set insert and a Python callback
 * when it dies: measured alone, 155 ns a task. 3.12 does not register an
 * eager task that finished in its first step; nor does this. Every other
 * task is added as before. */
static PyObject *s_done;

static PyObject *register_pending(PyObject *add, PyObject *task)
{
	PyObject *done = PyObject_CallMethodNoArgs(task, s_done);
	if (done == NULL)
		return NULL;
	int finished = PyObject_IsTrue(done);
	Py_DECREF(done);
	if (finished < 0)
		return NULL;
	if (finished)
		Py_RETURN_NONE;
	return PyObject_CallOneArg(add, task);
}

static PyMethodDef register_def = {"add", register_pending, METH_O,
                                   "adds a task to asyncio's set of tasks unless it is done"};

/* install_register gives asyncio's task set register_pending, once per
 * interpreter. */
static int install_register(void)
{
	static const m0_interned names[] = {{&s_done, "done"}};
	int rc = -1;
	PyObject *tasks = NULL, *set = NULL, *add = NULL, *hook = NULL;
	if (M0_INTERN_ALL(names) < 0 || (tasks = PyImport_ImportModule("asyncio.tasks")) == NULL ||
	    (set = PyObject_GetAttrString(tasks, "_all_tasks")) == NULL ||
	    (add = PyObject_GetAttrString(set, "add")) == NULL)
		goto out;
	if (PyCFunction_Check(add) && PyCFunction_GET_FUNCTION(add) == (PyCFunction)register_pending) {
		rc = 0; /* installed by an earlier executor */
		goto out;
	}
	if ((hook = PyCFunction_New(&register_def, add)) == NULL)
		goto out;
	if (PyObject_SetAttrString(set, "add", hook) < 0) {
		/* A set that takes no attributes: registration as before. */
		if (!PyErr_ExceptionMatches(PyExc_AttributeError))
			goto out;
		PyErr_Clear();
	}
	rc = 0;
out:
	Py_XDECREF(hook);
	Py_XDECREF(add);
	Py_XDECREF(set);
	Py_XDECREF(tasks);
	return rc;
}

int m0_asgi_eager_install(m0_asgi *ex)
{
	if (install_register() < 0)
		return -1;
	eager_start *e = PyMem_Calloc(1, sizeof *e);
	if (e == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	PyObject *capsule = PyCapsule_New(e, EAGER_CAPSULE, eager_free);
	if (capsule == NULL) {
		PyMem_Free(e);
		return -1;
	}
	PyObject *hook = NULL;
	if ((e->call_soon = PyObject_GetAttrString(ex->loop, "call_soon")) == NULL ||
	    (hook = PyCFunction_New(&eager_def, capsule)) == NULL) {
		Py_DECREF(capsule);
		return -1;
	}
	if (PyObject_SetAttrString(ex->loop, "call_soon", hook) < 0) {
		/* A loop type whose instances take no attributes: no eager
		 * start, as before. */
		PyErr_Clear();
		Py_DECREF(hook);
		Py_DECREF(capsule);
		return 0;
	}
	Py_DECREF(hook);
	ex->eager = capsule;
	return 0;
}

void m0_asgi_eager_arm(m0_asgi *ex, int armed)
{
	if (ex->eager != NULL)
		((eager_start *)PyCapsule_GetPointer(ex->eager, EAGER_CAPSULE))->armed = armed;
}

void m0_asgi_eager_remove(m0_asgi *ex)
{
	if (ex->eager == NULL)
		return;
	/* The loop's attribute holds the capsule, which holds the loop's
	 * bound method: removing it breaks the cycle. */
	if (PyObject_DelAttrString(ex->loop, "call_soon") < 0)
		PyErr_Clear();
	Py_CLEAR(ex->eager);
}

#else

int m0_asgi_eager_install(m0_asgi *ex)
{
	(void)ex;
	return 0;
}

void m0_asgi_eager_arm(m0_asgi *ex, int armed)
{
	(void)ex;
	(void)armed;
}

void m0_asgi_eager_remove(m0_asgi *ex) { (void)ex; }

#endif
