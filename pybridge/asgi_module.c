/*
 * _m0asgi: the primitives asgi_executor.py calls. Each takes the request's
 * slot first and acts on the job's arena or hands a body piece to the Go
 * side; none blocks. A write the Go side must make (it may block on a
 * full outbox) is queued to the slot's writer goroutine and answered by
 * a resume through the wake descriptor: QUEUED here, then the request's
 * resume_write.
 */
#include "asgi.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { WRITTEN = 0, QUEUED = 1, GONE = -1 };

static m0_asgi_slot *slots[M0_ASGI_MAX_SLOTS];
static PyObject *k_type, *k_body, *k_more_body, *v_http_request,
    *v_http_disconnect, *v_empty_bytes;

m0_asgi_slot *m0_asgi_slot_get(int id)
{
	if (id < 0 || id >= M0_ASGI_MAX_SLOTS)
		return NULL;
	m0_asgi_slot *s = slots[id];
	if (s == NULL) {
		s = PyMem_Calloc(1, sizeof *s);
		if (s == NULL)
			return NULL;
		s->id = id;
		slots[id] = s;
	}
	return s;
}

/* live gets the slot whose job is still attached, or sets an error. */
static m0_asgi_slot *live(PyObject *arg)
{
	long id = PyLong_AsLong(arg);
	if (id == -1 && PyErr_Occurred())
		return NULL;
	m0_asgi_slot *s = id >= 0 && id < M0_ASGI_MAX_SLOTS ? slots[id] : NULL;
	if (s == NULL || s->resp == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "ASGI send after the response was complete");
		return NULL;
	}
	return s;
}

static m0_asgi_slot *any_slot(PyObject *arg)
{
	long id = PyLong_AsLong(arg);
	if (id == -1 && PyErr_Occurred())
		return NULL;
	if (id < 0 || id >= M0_ASGI_MAX_SLOTS || slots[id] == NULL) {
		PyErr_Format(PyExc_RuntimeError, "no ASGI slot %ld", id);
		return NULL;
	}
	return slots[id];
}

/* m0_asgi_complete hands the job back: the response is final. */
void m0_asgi_complete(m0_asgi_slot *s)
{
	if (s->resp == NULL)
		return;
	s->resp = NULL;
	m0goASGIComplete(s->id);
}

PyObject *m0_asgi_request_message(PyObject *body, int more)
{
	PyObject *d = PyDict_New();
	if (d == NULL)
		return NULL;
	if (PyDict_SetItem(d, k_type, v_http_request) < 0 ||
	    PyDict_SetItem(d, k_body, body) < 0 ||
	    PyDict_SetItem(d, k_more_body, more ? Py_True : Py_False) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *disconnect_message(void)
{
	return Py_BuildValue("{OO}", k_type, v_http_disconnect);
}

/* read(slot): the next http.request message when it is known now (no
 * body, or its end), else None and the piece comes by resume_read. */
static PyObject *mod_read(PyObject *self, PyObject *arg)
{
	(void)self;
	m0_asgi_slot *s = any_slot(arg);
	if (s == NULL)
		return NULL;
	if (s->body_failed || s->client_gone)
		return disconnect_message();
	if (!s->has_body || s->body_left == 0 || s->resp == NULL) {
		s->has_body = 0;
		return m0_asgi_request_message(v_empty_bytes, 0);
	}
	m0goASGIRead(s->id);
	Py_RETURN_NONE;
}

void m0_asgi_resume_read(int id, const char *p, long n)
{
	m0_asgi_slot *s = slots[id];
	PyObject *message;
	if (n < 0) {
		s->body_failed = 1;
		message = disconnect_message();
	} else if (n == 0) {
		s->has_body = 0;
		message = m0_asgi_request_message(v_empty_bytes, 0);
	} else {
		if (s->body_left > 0)
			s->body_left -= n < s->body_left ? n : s->body_left;
		PyObject *body = PyBytes_FromStringAndSize(p, n);
		message = body ? m0_asgi_request_message(body, s->body_left != 0) : NULL;
		Py_XDECREF(body);
		if (s->body_left == 0)
			s->has_body = 0;
	}
	PyObject *r = NULL;
	if (message != NULL && s->request != NULL)
		r = PyObject_CallMethod(s->request, "resume_read", "O", message);
	Py_XDECREF(message);
	if (r == NULL && PyErr_Occurred())
		m0_log_exception("m0serve: delivering an ASGI request body piece failed:");
	Py_XDECREF(r);
}

void m0_asgi_resume_write(int id, int rc)
{
	m0_asgi_slot *s = slots[id];
	Py_CLEAR(s->held);
	s->writing = 0;
	if (rc < 0)
		s->client_gone = 1;
	if (s->request == NULL)
		return;
	PyObject *r = PyObject_CallMethod(s->request, "resume_write", "i", rc < 0 ? GONE : WRITTEN);
	if (r == NULL)
		m0_log_exception("m0serve: resuming an ASGI send failed:");
	Py_XDECREF(r);
}

/* m0_asgi_client_gone: the server saw the connection close. A body read
 * under way still ends by itself (the reader fails); the request learns
 * of it now. */
void m0_asgi_client_gone(int id)
{
	m0_asgi_slot *s = slots[id];
	s->client_gone = 1;
	if (s->request == NULL)
		return;
	PyObject *r = PyObject_CallMethod(s->request, "resume_gone", NULL);
	if (r == NULL)
		m0_log_exception("m0serve: telling an ASGI request its client left failed:");
	Py_XDECREF(r);
}

/* head(slot, status, headers, trailers): http.response.start into the
 * arena. */
static PyObject *mod_head(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 4)
		return PyErr_Format(PyExc_TypeError, "head(slot, status, headers, trailers)");
	m0_asgi_slot *s = live(args[0]);
	if (s == NULL || m0_asgi_read_head(s->resp, args[1], args[2]) < 0)
		return NULL;
	s->want_trailers = (uint8_t)PyObject_IsTrue(args[3]);
	Py_RETURN_NONE;
}

/* queue_write hands body to the slot's writer goroutine, the head first
 * when it has not gone out. body is held until the resume. QUEUED, GONE,
 * or -2 with an exception set. */
static int queue_write(m0_asgi_slot *s, PyObject *body, int trailers)
{
	if (s->client_gone)
		return GONE;
	/* The Go side reads held's bytes until the resume: a second write
	 * (two sends at once, one of them cancelled) must wait its turn. */
	if (s->writing) {
		PyErr_SetString(PyExc_RuntimeError,
		                "ASGI send while an earlier send of the request is still being written");
		return -2;
	}
	s->writing = 1;
	s->held = Py_XNewRef(body);
	int head = !s->head_sent;
	s->head_sent = 1;
	m0goASGIWrite(s->id, head, body ? PyBytes_AS_STRING(body) : NULL,
	              body ? (size_t)PyBytes_GET_SIZE(body) : 0, trailers);
	return QUEUED;
}

/* as_bytes: bytes as they are (immutable: safe to read without the GIL),
 * any other buffer copied into bytes. */
static PyObject *as_bytes(PyObject *body)
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

static int append_body(m0_asgi_slot *s, PyObject *body)
{
	m0_response *r = s->resp;
	if (m0_arena_append(r, PyBytes_AS_STRING(body), (size_t)PyBytes_GET_SIZE(body), NULL) < 0) {
		PyErr_NoMemory();
		return -1;
	}
	r->body.end = (uint32_t)r->len;
	return 0;
}

/* m0_asgi_send_whole ends the response with body, bytes that fit the
 * buffer: 0, or -1 with an exception set. */
int m0_asgi_send_whole(m0_asgi_slot *s, PyObject *body)
{
	if (append_body(s, body) < 0)
		return -1;
	s->resp->content_length = PyBytes_GET_SIZE(body);
	s->resp->outcome = M0_COMPLETE;
	m0_asgi_complete(s);
	return 0;
}

/* complete(slot, body): the whole response in one message. Over the
 * buffer limit with a writer, it streams with its length known. */
static PyObject *mod_complete(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 2)
		return PyErr_Format(PyExc_TypeError, "complete(slot, body)");
	m0_asgi_slot *s = live(args[0]);
	PyObject *body = s ? as_bytes(args[1]) : NULL;
	if (body == NULL)
		return NULL;
	Py_ssize_t n = PyBytes_GET_SIZE(body);
	int rc = WRITTEN;
	if (s->writer && (size_t)n > s->buffer_limit) {
		s->resp->content_length = n;
		rc = queue_write(s, body, 0);
		if (rc == -2) {
			Py_DECREF(body);
			return NULL;
		}
	} else if (m0_asgi_send_whole(s, body) < 0) {
		Py_DECREF(body);
		return NULL;
	}
	Py_DECREF(body);
	return PyLong_FromLong(rc);
}

/* write(slot, body): one piece of a body that comes in several. Without
 * a writer the pieces gather in the arena. */
static PyObject *mod_write(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 2)
		return PyErr_Format(PyExc_TypeError, "write(slot, body)");
	m0_asgi_slot *s = live(args[0]);
	PyObject *body = s ? as_bytes(args[1]) : NULL;
	if (body == NULL)
		return NULL;
	int rc = WRITTEN;
	if (!s->writer) {
		if (append_body(s, body) < 0) {
			Py_DECREF(body);
			return NULL;
		}
	} else {
		rc = queue_write(s, body, 0);
	}
	Py_DECREF(body);
	if (rc == -2)
		return NULL;
	return PyLong_FromLong(rc);
}

/* flush(slot): the body's end; the trailers go out now, with the head if
 * no body byte took it. */
static PyObject *mod_flush(PyObject *self, PyObject *arg)
{
	(void)self;
	m0_asgi_slot *s = live(arg);
	if (s == NULL)
		return NULL;
	if (!s->writer || !s->want_trailers)
		return PyLong_FromLong(WRITTEN);
	int rc = queue_write(s, NULL, 1);
	return rc == -2 ? NULL : PyLong_FromLong(rc);
}

/* finish(slot): the response ended well. */
static PyObject *mod_finish(PyObject *self, PyObject *arg)
{
	(void)self;
	m0_asgi_slot *s = live(arg);
	if (s == NULL)
		return NULL;
	m0_response *r = s->resp;
	if (s->head_sent) {
		r->outcome = M0_STREAMED;
	} else {
		r->content_length = (int64_t)(r->body.end - r->body.start);
		r->outcome = M0_COMPLETE;
	}
	m0_asgi_complete(s);
	Py_RETURN_NONE;
}

/* trailers(slot, headers): http.response.trailers fields, gathered. */
static PyObject *mod_trailers(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 2)
		return PyErr_Format(PyExc_TypeError, "trailers(slot, headers)");
	m0_asgi_slot *s = live(args[0]);
	if (s == NULL)
		return NULL;
	if (s->trailers == NULL && (s->trailers = m0_response_new()) == NULL)
		return PyErr_NoMemory();
	if (m0_asgi_read_fields(s->trailers, args[1], "ASGI trailer") < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* pathsend(slot, path): the body is a file the server sends itself. */
static PyObject *mod_pathsend(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 2)
		return PyErr_Format(PyExc_TypeError, "pathsend(slot, path)");
	m0_asgi_slot *s = live(args[0]);
	PyObject *path = NULL;
	if (s == NULL || !PyUnicode_FSConverter(args[1], &path))
		return NULL;
	int fd;
	Py_BEGIN_ALLOW_THREADS
	fd = open(PyBytes_AS_STRING(path), O_RDONLY | O_CLOEXEC);
	Py_END_ALLOW_THREADS
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0) {
			close(fd);
			PyErr_Format(PyExc_ValueError, "http.response.pathsend: %R is not a regular file", args[1]);
		} else {
			PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, args[1]);
		}
		Py_DECREF(path);
		return NULL;
	}
	Py_DECREF(path);
	m0_response *r = s->resp;
	r->file_fd = fd;
	r->file_offset = 0;
	r->file_length = st.st_size;
	r->content_length = st.st_size;
	r->outcome = M0_COMPLETE;
	m0_asgi_complete(s);
	Py_RETURN_NONE;
}

/* m0_asgi_log_exception is m0_log_exception with the request's line
 * first on the logged line: a traceback alone does not say which URL
 * failed. */
void m0_asgi_log_exception(m0_asgi_slot *s, const char *context)
{
	m0_log("m0serve: %.*s: %s", s->line_len, s->line, context);
	m0_print_exception();
}

static void raise_again(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
	PyErr_SetRaisedException(Py_NewRef(exc));
#else
	PyObject *tb = PyException_GetTraceback(exc);
	PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), Py_NewRef(exc), tb);
#endif
}

/* m0_asgi_fail: the app raised exc, or returned without ending its
 * response (exc NULL). A 500 while nothing went out, an abort after; a
 * client that left is not the app's error (no traceback). An error after
 * the response was complete (a background task) is logged only. */
void m0_asgi_fail(m0_asgi_slot *s, PyObject *exc, const char *context)
{
	int quiet = s->client_gone || s->body_failed;
	if (!quiet) {
		if (exc != NULL && PyExceptionInstance_Check(exc)) {
			raise_again(exc);
			m0_asgi_log_exception(s, context);
		} else {
			m0_log("m0serve: %.*s: %s", s->line_len, s->line, context);
		}
	}
	m0_response *r = s->resp;
	if (r != NULL) {
		if (quiet) {
			r->outcome = M0_ABORTED;
		} else if (s->head_sent) {
			r->outcome = M0_ABORTED;
			r->app_error = 1;
		} else {
			m0_asgi_plain(r, 500, "Internal Server Error", 1);
		}
		m0_asgi_complete(s);
	}
}

/* m0_asgi_cancel: the shutdown cancelled the task. */
void m0_asgi_cancel(m0_asgi_slot *s)
{
	if (s->resp != NULL) {
		if (s->head_sent)
			s->resp->outcome = M0_ABORTED;
		else
			m0_asgi_unavailable(s->resp);
		m0_asgi_complete(s);
	}
}

/* m0_asgi_release: the task ended. Its request takes no message after
 * (m0_asgi_request_end) and the slot goes back to the Go side; 0, or -1
 * with an exception set when ending the request failed (the slot goes
 * back all the same). */
int m0_asgi_release(m0_asgi_slot *s)
{
	if (s->resp != NULL) {
		m0_asgi_plain(s->resp, 500, "Internal Server Error", 1);
		m0_asgi_complete(s);
	}
	int rc = s->request != NULL ? m0_asgi_request_end(s->request) : 0;
	Py_CLEAR(s->request);
	m0goASGIRelease(s->id);
	return rc;
}

/* failed(slot, exc, context): m0_asgi_fail, exc None for none. */
static PyObject *mod_failed(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 3 || !PyUnicode_Check(args[2]))
		return PyErr_Format(PyExc_TypeError, "failed(slot, exc, context)");
	m0_asgi_slot *s = any_slot(args[0]);
	if (s == NULL)
		return NULL;
	const char *context = PyUnicode_AsUTF8(args[2]);
	if (context == NULL)
		return NULL;
	m0_asgi_fail(s, args[1] == Py_None ? NULL : args[1], context);
	Py_RETURN_NONE;
}

static PyObject *mod_cancelled(PyObject *self, PyObject *arg)
{
	(void)self;
	m0_asgi_slot *s = any_slot(arg);
	if (s == NULL)
		return NULL;
	m0_asgi_cancel(s);
	Py_RETURN_NONE;
}

static PyObject *mod_release(PyObject *self, PyObject *arg)
{
	(void)self;
	m0_asgi_slot *s = any_slot(arg);
	if (s == NULL)
		return NULL;
	if (m0_asgi_release(s) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* wake(executor): the wake descriptor is readable; the Go side spawns the
 * queued jobs and delivers the finished reads and writes. */
static PyObject *mod_wake(PyObject *self, PyObject *arg)
{
	(void)self;
	long id = PyLong_AsLong(arg);
	m0_asgi *ex = id >= 0 && id < M0_ASGI_MAX_EXECUTORS ? m0_asgi_executor_get((int)id) : NULL;
	if (ex == NULL) {
		if (!PyErr_Occurred())
			PyErr_Format(PyExc_RuntimeError, "no ASGI executor %ld", id);
		return NULL;
	}
	if (m0goASGIWake((int)id)) {
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
	raise_again(args[0]);
	m0_log_exception(context);
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"read", mod_read, METH_O, NULL},
    {"head", (PyCFunction)(void (*)(void))mod_head, METH_FASTCALL, NULL},
    {"complete", (PyCFunction)(void (*)(void))mod_complete, METH_FASTCALL, NULL},
    {"write", (PyCFunction)(void (*)(void))mod_write, METH_FASTCALL, NULL},
    {"flush", mod_flush, METH_O, NULL},
    {"finish", mod_finish, METH_O, NULL},
    {"trailers", (PyCFunction)(void (*)(void))mod_trailers, METH_FASTCALL, NULL},
    {"pathsend", (PyCFunction)(void (*)(void))mod_pathsend, METH_FASTCALL, NULL},
    {"failed", (PyCFunction)(void (*)(void))mod_failed, METH_FASTCALL, NULL},
    {"cancelled", mod_cancelled, METH_O, NULL},
    {"release", mod_release, METH_O, NULL},
    {"wake", mod_wake, METH_O, NULL},
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
	if ((k_type = PyUnicode_InternFromString("type")) == NULL ||
	    (k_body = PyUnicode_InternFromString("body")) == NULL ||
	    (k_more_body = PyUnicode_InternFromString("more_body")) == NULL ||
	    (v_http_request = PyUnicode_InternFromString("http.request")) == NULL ||
	    (v_http_disconnect = PyUnicode_InternFromString("http.disconnect")) == NULL ||
	    (v_empty_bytes = PyBytes_FromStringAndSize("", 0)) == NULL)
		return -1;
	PyObject *m = PyModule_Create(&module);
	if (m == NULL)
		return -1;
	if (m0_asgi_request_init(m) < 0) {
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
