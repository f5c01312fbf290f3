/*
 * The ASGI executor's C side: the Python half loaded once per process,
 * an executor with its apps (each one's scope template, lifespan state and
 * callable) and its Python Executor, a job
 * spawned as one task, and the wake descriptor the event loop reads.
 */
#include "asgi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

static PyObject *python_half; /* the executor module, made once */
static PyObject *s_create_task, *s_receive, *s_send, *s_scheduled, *s_when, *s_time;

/* Requests become tasks by asyncio.Task(run, loop=, name=) itself, not
 * the loop's create_task: uvloop's is a Python-level call more, and a
 * task made without a name formats "Task-N" (vfprintf, in Python 3.11's
 * profile of a bare request). */
static PyObject *task_type, *task_kwnames, *task_name;

/* From Python 3.12 the task starts eagerly: its first step runs inside
 * the constructor, and an app that answers without suspending (a bare
 * hello, a cached page) never has its task scheduled, stepped from the
 * loop's queue or registered among all tasks, which a model of the
 * executor's path measured as most of its cost (bench/README, "Figures behind the comments").
 * Before 3.12, asgi_eager.c does the same. */
#if PY_VERSION_HEX >= 0x030C0000
#define TASK_KWNAMES Py_BuildValue("(sss)", "loop", "name", "eager_start")
#else
#define TASK_KWNAMES Py_BuildValue("(ss)", "loop", "name")
#endif

static PyObject *load_python_half(const char *source)
{
	if (python_half != NULL)
		return python_half;
	if (m0_asgi_module_init() < 0)
		return NULL;
	static const m0_interned names[] = {
	    {&s_create_task, "create_task"},
	    {&s_receive, "receive"},
	    {&s_send, "send"},
	    {&s_scheduled, "_scheduled"},
	    {&s_when, "_when"},
	    {&s_time, "time"},
	    {&task_name, "m0serve ASGI request"},
	};
	if (M0_INTERN_ALL(names) < 0 || (task_kwnames == NULL && (task_kwnames = TASK_KWNAMES) == NULL))
		return NULL;
	if (task_type == NULL) {
		PyObject *asyncio = PyImport_ImportModule("asyncio");
		if (asyncio == NULL)
			return NULL;
		task_type = PyObject_GetAttrString(asyncio, "Task");
		Py_DECREF(asyncio);
		if (task_type == NULL)
			return NULL;
	}
	PyObject *code = Py_CompileString(source, "m0serve/asgi_executor.py", Py_file_input);
	if (code == NULL)
		return NULL;
	python_half = PyImport_ExecCodeModule("m0serve_asgi", code);
	Py_DECREF(code);
	return python_half;
}

/* clear_apps drops the apps' references. */
static void clear_apps(m0_asgi *ex)
{
	for (int i = 0; i < ex->napps; i++) {
		Py_CLEAR(ex->apps[i].scope);
		Py_CLEAR(ex->apps[i].state);
		Py_CLEAR(ex->apps[i].callable);
	}
}

/* fill_apps takes each app's scope template, and its callable and
 * lifespan state from the Python Executor (apps, states). */
static int fill_apps(m0_asgi *ex, m0_app **apps, const char *server_name,
                     int server_port, const char *scheme)
{
	PyObject *callables = PyObject_GetAttrString(ex->executor, "apps");
	PyObject *states = callables ? PyObject_GetAttrString(ex->executor, "states") : NULL;
	int rc = -1;
	if (states == NULL)
		goto out;
	if (!PyList_Check(callables) || !PyList_Check(states) ||
	    PyList_GET_SIZE(callables) != ex->napps || PyList_GET_SIZE(states) != ex->napps) {
		PyErr_SetString(PyExc_TypeError, "Executor.apps and .states are not one list entry per app");
		goto out;
	}
	for (int i = 0; i < ex->napps; i++) {
		m0_asgi_app *a = &ex->apps[i];
		a->app = apps[i];
		a->callable = Py_NewRef(PyList_GET_ITEM(callables, i));
		a->state = Py_NewRef(PyList_GET_ITEM(states, i));
		if (!PyDict_Check(a->state)) {
			PyErr_SetString(PyExc_TypeError, "an Executor.states entry is not a dict");
			goto out;
		}
		if ((a->scope = m0_asgi_scope_template(apps[i], server_name, server_port, scheme)) == NULL)
			goto out;
	}
	rc = 0;
out:
	Py_XDECREF(callables);
	Py_XDECREF(states);
	return rc;
}

m0_asgi *m0_asgi_new(int id, m0_app **apps, int napps, const char *source,
                     const char *loop, const char *lifespan,
                     const char *server_name, int server_port,
                     const char *scheme, double cancel_timeout, int wake_fd,
                     int driven, char **err)
{
	if (id < 0 || id >= M0_ASGI_MAX_EXECUTORS || m0_asgi_executor_get(id) != NULL) {
		*err = m0_copy_text("no free ASGI executor id");
		return NULL;
	}
	if (napps < 1 || napps > M0_ASGI_MAX_APPS) {
		*err = m0_copy_text("an ASGI executor serves 1 to 64 apps");
		return NULL;
	}
	m0_asgi *ex = PyMem_Calloc(1, sizeof *ex);
	if (ex == NULL) {
		*err = m0_copy_text("out of memory");
		return NULL;
	}
	ex->id = id;
	ex->napps = napps;
	PyObject *half = load_python_half(source);
	PyObject *callables = half ? PyTuple_New(napps) : NULL;
	if (callables != NULL)
		for (int i = 0; i < napps; i++)
			PyTuple_SET_ITEM(callables, i, Py_NewRef(apps[i]->app));
	if (callables == NULL ||
	    (ex->executor = PyObject_CallMethod(half, "Executor", "iOssidi", id, callables, loop,
	                                        lifespan, wake_fd, cancel_timeout, driven)) == NULL ||
	    (ex->loop = PyObject_GetAttrString(ex->executor, "loop")) == NULL ||
	    fill_apps(ex, apps, server_name, server_port, scheme) < 0 ||
	    m0_asgi_eager_install(ex) < 0) {
		*err = m0_format_exception();
		Py_XDECREF(callables);
		clear_apps(ex);
		Py_XDECREF(ex->executor);
		Py_XDECREF(ex->loop);
		PyMem_Free(ex);
		return NULL;
	}
	Py_DECREF(callables);
	m0_asgi_executor_set(id, ex);
	return ex;
}

/* call_executor calls the executor's method name; the text of an
 * exception it raised, or NULL. */
static char *call_executor(m0_asgi *ex, const char *name)
{
	PyObject *r = PyObject_CallMethod(ex->executor, name, NULL);
	if (r == NULL)
		return m0_format_exception();
	Py_DECREF(r);
	return NULL;
}

/* m0_asgi_run runs the event loop until the executor stops; the text of
 * an exception that ended it, or NULL. */
char *m0_asgi_run(m0_asgi *ex)
{
	return call_executor(ex, "run");
}

/* m0_asgi_enter makes the calling thread (the server's loop thread) the
 * one running the executor's event loop, which m0_asgi_step then steps;
 * it returns the descriptor whose readiness says the loop has I/O to
 * look at, or -1 (the exception logged). */
int m0_asgi_enter(m0_asgi *ex)
{
	PyObject *fd = PyObject_CallMethod(ex->executor, "enter", NULL);
	long n = fd != NULL ? PyLong_AsLong(fd) : -1;
	Py_XDECREF(fd);
	if (n >= 0 && (ex->step = PyObject_GetAttrString(ex->executor, "step")) == NULL)
		n = -1;
	/* asyncio's ready queue, made once in the loop's constructor: a step
	 * with none ready, no I/O and no timer due has nothing to run. */
	if (n >= 0 && (ex->ready = PyObject_GetAttrString(ex->loop, "_ready")) == NULL)
		PyErr_Clear(); /* not asyncio's: step every time */
	if (n < 0) {
		m0_log_exception("m0serve: cannot run the ASGI event loop on the I/O thread");
		return -1;
	}
	return (int)n;
}

/* next_timer is what step returns when no callback is ready: the
 * seconds until the loop's next timer, -1 with none. */
static double next_timer(m0_asgi *ex)
{
	PyObject *scheduled = PyObject_GetAttr(ex->loop, s_scheduled);
	if (scheduled == NULL || !PyList_Check(scheduled) || PyList_GET_SIZE(scheduled) == 0) {
		Py_XDECREF(scheduled);
		PyErr_Clear();
		return scheduled == NULL ? 0 : -1;
	}
	PyObject *when = PyObject_GetAttr(PyList_GET_ITEM(scheduled, 0), s_when);
	Py_DECREF(scheduled);
	PyObject *now = when != NULL ? PyObject_CallMethodNoArgs(ex->loop, s_time) : NULL;
	double wait = now != NULL ? PyFloat_AsDouble(when) - PyFloat_AsDouble(now) : 0;
	Py_XDECREF(when);
	Py_XDECREF(now);
	if (PyErr_Occurred()) {
		PyErr_Clear();
		return 0; /* let the step find out */
	}
	return wait > 0 ? wait : 0;
}

/* m0_asgi_step runs one iteration of the event loop (io: look at its
 * descriptors too; timer_due: its next timer is due) unless it has
 * nothing to do, and returns the seconds until its next timer, 0 when
 * callbacks are ready, -1 when it waits for nothing of its own. An
 * exception out of the loop itself (a callback's SystemExit) is logged:
 * the server goes on. */
double m0_asgi_step(m0_asgi *ex, int io, int timer_due)
{
	if (!io && !timer_due && ex->ready != NULL && PySequence_Size(ex->ready) == 0) {
		double wait = next_timer(ex);
		if (wait != 0)
			return wait;
	}
	PyObject *r = PyObject_CallOneArg(ex->step, io ? Py_True : Py_False);
	if (r == NULL) {
		m0_log_exception("m0serve: exception in the ASGI event loop");
		return 0;
	}
	double wait = PyFloat_AsDouble(r);
	Py_DECREF(r);
	if (wait == -1.0 && PyErr_Occurred()) {
		PyErr_Clear();
		return 0;
	}
	return wait;
}

/* m0_asgi_leave: the loop thread is done with the event loop. */
void m0_asgi_leave(m0_asgi *ex)
{
	Py_CLEAR(ex->step);
	Py_CLEAR(ex->ready);
	PyObject *r = PyObject_CallMethod(ex->executor, "leave", NULL);
	if (r == NULL)
		m0_log_exception("m0serve: leaving the ASGI event loop");
	Py_XDECREF(r);
}

/* m0_asgi_finish is m0_asgi_run's second half for an executor a loop
 * thread drove: cancel what runs, lifespan shutdown, close the loop. */
char *m0_asgi_finish(m0_asgi *ex)
{
	return call_executor(ex, "finish");
}

void m0_asgi_free(m0_asgi *ex)
{
	m0_asgi_executor_set(ex->id, NULL);
	m0_asgi_eager_remove(ex);
	Py_XDECREF(ex->step);
	Py_XDECREF(ex->ready);
	clear_apps(ex);
	Py_XDECREF(ex->executor);
	Py_XDECREF(ex->loop);
	PyMem_Free(ex);
}

/* call_app calls the app with the scope and the request's receive and
 * send; what it returns, or NULL with the exception set. */
static PyObject *call_app(PyObject *app, PyObject *request, PyObject *scope)
{
	PyObject *receive = PyObject_GetAttr(request, s_receive);
	PyObject *send = receive ? PyObject_GetAttr(request, s_send) : NULL;
	PyObject *awaitable = NULL;
	if (send != NULL) {
		PyObject *args[3] = {scope, receive, send};
		awaitable = PyObject_Vectorcall(app, args, 3, NULL);
	}
	Py_XDECREF(receive);
	Py_XDECREF(send);
	return awaitable;
}

/* start_task runs the app for request as a task, whose coroutine
 * (asgi_task.c) settles the request and releases its slot; so does every
 * way out here. */
static void start_task(m0_asgi *ex, PyObject *app, PyObject *request, PyObject *scope)
{
	PyObject *awaitable = call_app(app, request, scope);
	PyObject *coro = awaitable ? m0_asgi_task_coro_new(request, awaitable) : NULL;
	if (coro == NULL) {
		if (awaitable != NULL && PyCoro_CheckExact(awaitable)) {
			/* Closed, so no "never awaited" warning follows. */
			PyObject *raised = m0_fetch_exception();
			PyObject *r = PyObject_CallMethod(awaitable, "close", NULL);
			Py_XDECREF(r);
			PyErr_Clear();
			m0_restore_exception(raised);
		}
		Py_XDECREF(awaitable);
		m0_asgi_app_raised(request);
		return;
	}
	Py_DECREF(awaitable);
	PyObject *task;
	if (ex->direct_tasks) {
		PyObject *args[5] = {NULL, coro, ex->loop, task_name, Py_True};
		m0_asgi_eager_arm(ex, 1);
		task = PyObject_Vectorcall(task_type, args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, task_kwnames);
		m0_asgi_eager_arm(ex, 0);
	} else {
		task = PyObject_CallMethodOneArg(ex->loop, s_create_task, coro);
	}
	if (task != NULL) {
		Py_DECREF(task); /* the loop holds it while it runs */
		Py_DECREF(coro);
		return;
	}
	m0_asgi_log_exception((m0_asgi_conn *)request, "cannot start the ASGI request");
	/* Its close ends the request and releases the slot. */
	PyObject *r = PyObject_CallMethod(coro, "close", NULL);
	if (r == NULL) {
		m0_asgi_log_exception((m0_asgi_conn *)request, "closing the unstarted ASGI request failed");
	}
	Py_XDECREF(r);
	Py_DECREF(coro);
}

/* m0_asgi_spawn starts one request: its object, the scope, and a task
 * running the app. *conn is the request's connection from before the
 * task starts (settle's m0goASGIFree may let it go again inside the
 * call), or stays NULL. A failure before the task exists is a 500. */
void m0_asgi_spawn(m0_asgi *ex, int app, int slot, const m0_request *req,
                   const char *head, const m0_field *fields,
                   const char *remote, m0_response *resp, int writer,
                   m0_asgi_conn **conn)
{
	m0_response_reset(resp);
	m0_response_trim(resp);
	PyObject *request = req->websocket ? m0_asgi_websocket_new(ex, slot, req, head, fields, resp)
	                                   : m0_asgi_request_new(ex, slot, req, head, resp, writer);
	if (request == NULL) {
		m0_log_exception("m0serve: cannot start the ASGI request");
		m0_response_plain(resp, 500, "Internal Server Error", 0);
		/* No connection took the slot: nothing for settle to wait on. */
		m0goASGIComplete(slot);
		m0goASGIFree(slot);
		return;
	}
	*conn = (m0_asgi_conn *)request;
	/* The job's app (asgi.go keeps it within napps). */
	const m0_asgi_app *a = &ex->apps[app];
	PyObject *scope = m0_asgi_scope_build(a, req, head, fields, remote);
	if (scope != NULL && req->websocket && m0_asgi_websocket_scope(scope, request) < 0)
		Py_CLEAR(scope);
	if (scope != NULL) {
		start_task(ex, a->callable, request, scope);
		Py_DECREF(scope);
	} else {
		m0_asgi_conn *c = (m0_asgi_conn *)request;
		m0_asgi_log_exception(c, "cannot start the ASGI request");
		m0_response_plain(resp, 500, "Internal Server Error", 0);
		m0_asgi_complete(c);
		if (m0_asgi_release(c) < 0)
			PyErr_Clear();
	}
	Py_DECREF(request);
}

int m0_wakefd_new(int *read_fd, int *write_fd)
{
#ifdef __linux__
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	*read_fd = *write_fd = fd;
	return 0;
#else
	int p[2];
	if (pipe(p) < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		fcntl(p[i], F_SETFL, fcntl(p[i], F_GETFL) | O_NONBLOCK);
		fcntl(p[i], F_SETFD, FD_CLOEXEC);
	}
	*read_fd = p[0];
	*write_fd = p[1];
	return 0;
#endif
}

void m0_wakefd_signal(int write_fd)
{
	uint64_t one = 1;
	ssize_t rc;
	do
		rc = write(write_fd, &one, sizeof one);
	while (rc < 0 && errno == EINTR);
}

void m0_wakefd_drain(int read_fd)
{
#ifdef __linux__
	/* One read resets an eventfd's counter; a second would only say
	 * EAGAIN, a syscall per wake for nothing. */
	uint64_t count;
	ssize_t rc;
	do
		rc = read(read_fd, &count, sizeof count);
	while (rc < 0 && errno == EINTR);
#else
	char buf[64];
	while (read(read_fd, buf, sizeof buf) > 0) {
	}
#endif
}

void m0_wakefd_close(int read_fd, int write_fd)
{
	close(read_fd);
	if (write_fd != read_fd)
		close(write_fd);
}
