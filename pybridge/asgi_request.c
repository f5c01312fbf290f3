/*
 * The ASGI HTTP request: one object per request in flight, whose bound
 * receive and send an app awaits. It owns the whole HTTP protocol: the
 * request body's messages, the order of the response's messages (one
 * state machine), trailers, pathsend, the disconnect; the plumbing it
 * stands on (futures, the Go side's reads and writes, how a response
 * ends) is asgi_conn.c's, which a WebSocket type shares.
 *
 * A message that needs no wait is answered with a ready awaitable: no
 * future, no coroutine, no Python frame: a fifth of the executor's path
 * in a measured model (bench/README, "Figures behind the comments"). A receive that waits for a body piece or
 * the disconnect, and a send that waits for its write, return a future
 * of the loop's (loop.create_future()), settled by the resume in C.
 *
 * What this changes for an app: send and receive are awaitable callables,
 * as the ASGI spec defines them, but not coroutine functions (as with
 * Granian). `await send(m)` behaves as with a coroutine; an error in a
 * message is raised by the call, which `await` cannot tell apart;
 * `asyncio.ensure_future(send(m))` works and `asyncio.create_task(send(m))`,
 * which wants a coroutine, does not.
 */
#include "asgi.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Send states: the order ASGI's HTTP messages must come in. */
enum { START, BODY, TRAILERS, DONE };
static const char *const state_names[] = {"start", "body", "trailers", "done"};

typedef struct {
	m0_asgi_conn conn;
	m0_response *trailer_fields; /* made at first use */
	PyObject *stash;             /* a body message no receive waited for */
	int64_t body_left;           /* request body not yet read; -1 unknown */
	uint32_t buffer_limit;
	uint8_t send_state, trailers, streaming, finish_on_write;
	uint8_t has_body;   /* body bytes remain to be read */
	uint8_t body_done;  /* the last body message went to a receive */
	uint8_t stash_last; /* stash is the last body message */
} m0_asgi_http;

static PyTypeObject request_type;

static PyObject *k_type, *k_status, *k_headers, *k_trailers, *k_body,
    *k_more_body, *k_more_trailers, *k_path, *v_start, *v_body,
    *v_trailers, *v_pathsend, *v_request, *v_disconnect, *v_response_prefix,
    *empty_tuple, *empty_bytes;

/* flag: the truth of message[key], False when absent: 1, 0, or -1. */
static int flag(PyObject *message, PyObject *key)
{
	PyObject *v = m0_asgi_get(message, key, Py_False);
	if (v == NULL)
		return -1;
	int truth = PyObject_IsTrue(v);
	Py_DECREF(v);
	return truth;
}

static PyObject *body_message(PyObject *body, int more)
{
	PyObject *d = PyDict_New();
	if (d == NULL)
		return NULL;
	if (PyDict_SetItem(d, k_type, v_request) < 0 || PyDict_SetItem(d, k_body, body) < 0 ||
	    PyDict_SetItem(d, k_more_body, more ? Py_True : Py_False) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *disconnect_message(void)
{
	PyObject *d = PyDict_New();
	if (d != NULL && PyDict_SetItem(d, k_type, v_disconnect) < 0)
		Py_CLEAR(d);
	return d;
}

/* close: the response is final, or the client gone. Receives waiting
 * for the disconnect (those after the body) get it now. */
static int close_request(m0_asgi_http *h)
{
	h->conn.closed = 1;
	if (!h->body_done || h->conn.waiters == NULL)
		return 0;
	PyObject *m = disconnect_message();
	int rc = m ? m0_asgi_deliver_all(&h->conn, m) : -1;
	Py_XDECREF(m);
	return rc;
}

/* finish: the response ended well. */
static void finish(m0_asgi_http *h)
{
	m0_response *r = h->conn.resp;
	if (r == NULL)
		return;
	if (h->conn.head_sent) {
		r->outcome = M0_STREAMED;
	} else {
		r->content_length = (int64_t)(r->body.end - r->body.start);
		r->outcome = M0_COMPLETE;
	}
	m0_asgi_complete(&h->conn);
}

/* end_after_write: the response's last write went to the plumbing (r:
 * what the send awaits, or NULL). The response ends now when nothing is
 * out (the port took it at once), else at the last resume (written). */
static PyObject *end_after_write(m0_asgi_http *h, PyObject *r)
{
	if (r == NULL)
		return NULL;
	if (h->conn.writing) {
		h->finish_on_write = 1;
		return r;
	}
	/* The send is over: a failure telling a waiting receive is logged,
	 * as at a resume (written), and fails no send. */
	finish(h);
	if (close_request(h) < 0)
		m0_asgi_log_exception(&h->conn, "ending an ASGI write failed");
	return r;
}

static int append_body(m0_asgi_http *h, PyObject *body)
{
	m0_response *r = h->conn.resp;
	if (m0_arena_append(r, PyBytes_AS_STRING(body), (size_t)PyBytes_GET_SIZE(body), NULL) < 0) {
		PyErr_NoMemory();
		return -1;
	}
	r->body.end = (uint32_t)r->len;
	return 0;
}

/* ---- receive ---- */

/* took hands a body message to a receive: after the last one, later
 * receives wait for the disconnect. */
static PyObject *took(m0_asgi_http *h, PyObject *message, int last, int disconnect)
{
	if (last) {
		h->body_done = 1;
		/* Receives queued behind this one wait for the disconnect: it
		 * has come already when the response is final. */
		if ((disconnect || h->conn.closed) && close_request(h) < 0) {
			Py_DECREF(message);
			return NULL;
		}
	}
	return m0_asgi_ready(message);
}

static PyObject *request_receive(m0_asgi_http *h, PyObject *unused)
{
	(void)unused;
	m0_asgi_conn *c = &h->conn;
	if (h->body_done) {
		if (c->closed || c->input_ended)
			return m0_asgi_ready(disconnect_message());
		return m0_asgi_wait(c);
	}
	if (h->stash != NULL) {
		PyObject *m = h->stash;
		h->stash = NULL;
		return took(h, m, h->stash_last, 0);
	}
	if (c->read_failed || c->client_gone) {
		PyObject *m = disconnect_message();
		return m ? took(h, m, 1, 1) : NULL;
	}
	if (!h->has_body || h->body_left == 0 || c->resp == NULL) {
		h->has_body = 0;
		PyObject *m = body_message(empty_bytes, 0);
		return m ? took(h, m, 1, 0) : NULL;
	}
	PyObject *fut = m0_asgi_wait(c);
	if (fut != NULL && !c->reading)
		m0_asgi_read(c);
	return fut;
}

/* read_back: a body piece (n bytes at p), the body's end (0) or a failed
 * read (-1) came back: to the oldest waiting receive, else kept. */
static void read_back(m0_asgi_conn *c, const char *p, long n)
{
	m0_asgi_http *h = (m0_asgi_http *)c;
	PyObject *m;
	int last = 1, disconnect = 0;
	if (n < 0)
		c->read_failed = 1;
	if (h->body_done)
		return; /* a receive took the body's end meanwhile */
	if (n < 0) {
		disconnect = 1;
		m = disconnect_message();
	} else if (n == 0) {
		h->has_body = 0;
		m = body_message(empty_bytes, 0);
	} else {
		if (h->body_left > 0)
			h->body_left -= n < h->body_left ? n : h->body_left;
		PyObject *body = PyBytes_FromStringAndSize(p, n);
		last = h->body_left == 0;
		m = body ? body_message(body, !last) : NULL;
		Py_XDECREF(body);
		if (last)
			h->has_body = 0;
	}
	if (m == NULL) {
		/* No message (out of memory): the waiting receive raises the
		 * error rather than wait for ever; the body is lost to it. */
		c->read_failed = 1;
		m0_asgi_deliver_error(c);
		return;
	}
	int delivered = m0_asgi_deliver(c, m);
	if (delivered == 0 && disconnect) {
		Py_DECREF(m); /* the next receive sees read_failed */
		return;
	}
	if (delivered == 0) {
		Py_XSETREF(h->stash, m);
		h->stash_last = (uint8_t)last;
		return;
	}
	Py_DECREF(m);
	if (delivered < 0)
		return;
	if (last) {
		h->body_done = 1;
		if (disconnect || c->closed)
			close_request(h);
		return;
	}
	/* Another receive waits (two at once): read on for it. */
	int more = m0_asgi_has_waiter(c);
	if (more > 0)
		m0_asgi_read(c);
}

static void client_left(m0_asgi_conn *c)
{
	m0_asgi_http *h = (m0_asgi_http *)c;
	h->body_done = 1;
	c->closed = 1;
	PyObject *m = disconnect_message();
	if (m != NULL)
		m0_asgi_deliver_all(c, m);
	Py_XDECREF(m);
}

/* ---- send ---- */

static PyObject *send_start(m0_asgi_http *h, PyObject *message)
{
	PyObject *status = m0_asgi_get(message, k_status, NULL);
	PyObject *headers = status ? m0_asgi_get(message, k_headers, empty_tuple) : NULL;
	int trailers = headers ? flag(message, k_trailers) : -1;
	int rc = trailers < 0 ? -1 : m0_asgi_read_head(h->conn.resp, status, headers);
	Py_XDECREF(status);
	Py_XDECREF(headers);
	if (rc < 0)
		return NULL;
	h->trailers = (uint8_t)trailers;
	h->send_state = BODY;
	return Py_NewRef(m0_asgi_ready_none);
}

/* send_whole: the whole body in one message. It fits the buffer, or
 * streams with its length known (then the response ends once the write
 * is out). */
static PyObject *send_whole(m0_asgi_http *h, PyObject *body)
{
	m0_asgi_conn *c = &h->conn;
	h->send_state = DONE;
	PyObject *b = m0_asgi_as_bytes(body);
	if (b == NULL)
		return NULL;
	Py_ssize_t n = PyBytes_GET_SIZE(b);
	PyObject *r;
	if (c->writer && (size_t)n > h->buffer_limit) {
		c->resp->content_length = n;
		r = end_after_write(h, m0_asgi_write(c, b, NULL));
	} else if (append_body(h, b) < 0) {
		r = NULL;
	} else {
		c->resp->content_length = n;
		c->resp->outcome = M0_COMPLETE;
		m0_asgi_complete(c);
		r = close_request(h) < 0 ? NULL : Py_NewRef(m0_asgi_ready_none);
	}
	Py_DECREF(b);
	return r;
}

static PyObject *send_body(m0_asgi_http *h, PyObject *message)
{
	m0_asgi_conn *c = &h->conn;
	int more = flag(message, k_more_body);
	PyObject *body = more < 0 ? NULL : m0_asgi_get(message, k_body, empty_bytes);
	if (body == NULL)
		return NULL;
	if (!more && !h->streaming && !h->trailers) {
		PyObject *r = send_whole(h, body);
		Py_DECREF(body);
		return r;
	}
	h->streaming = 1;
	PyObject *fut = NULL;
	int nonempty = PyObject_IsTrue(body);
	if (nonempty > 0) {
		PyObject *b = m0_asgi_as_bytes(body);
		if (b != NULL && !c->writer)
			nonempty = append_body(h, b) < 0 ? -1 : 0;
		else if (b != NULL)
			nonempty = (fut = m0_asgi_write(c, b, NULL)) == NULL ? -1 : 1;
		else
			nonempty = -1;
		Py_XDECREF(b);
	}
	Py_DECREF(body);
	if (nonempty < 0)
		return NULL;
	if (!more) {
		if (h->trailers) {
			h->send_state = TRAILERS;
		} else {
			h->send_state = DONE;
			/* With writes still out, the response ends after them:
			 * an empty write takes its turn. */
			if (fut == NULL && c->writing && (fut = m0_asgi_write(c, NULL, NULL)) == NULL)
				return NULL;
			return end_after_write(h, fut != NULL ? fut : Py_NewRef(m0_asgi_ready_none));
		}
	}
	return fut != NULL ? fut : Py_NewRef(m0_asgi_ready_none);
}

static PyObject *send_trailers(m0_asgi_http *h, PyObject *message)
{
	m0_asgi_conn *c = &h->conn;
	if (h->trailer_fields == NULL && (h->trailer_fields = m0_response_new()) == NULL)
		return PyErr_NoMemory();
	PyObject *headers = m0_asgi_get(message, k_headers, empty_tuple);
	int rc = headers ? m0_asgi_read_fields(h->trailer_fields, headers, "ASGI trailer") : -1;
	Py_XDECREF(headers);
	int more = rc < 0 ? -1 : flag(message, k_more_trailers);
	if (more < 0)
		return NULL;
	if (more)
		return Py_NewRef(m0_asgi_ready_none);
	h->send_state = DONE;
	if (c->writer) {
		/* The trailers go out now, with the head if no body byte took it. */
		return end_after_write(h, m0_asgi_write(c, NULL, h->trailer_fields));
	}
	finish(h);
	return close_request(h) < 0 ? NULL : Py_NewRef(m0_asgi_ready_none);
}

/* send_path: http.response.pathsend, a file the server sends itself. */
static PyObject *send_path(m0_asgi_http *h, PyObject *message)
{
	h->send_state = DONE;
	PyObject *path_arg = m0_asgi_get(message, k_path, NULL);
	PyObject *path = NULL;
	if (path_arg == NULL || !PyUnicode_FSConverter(path_arg, &path)) {
		Py_XDECREF(path_arg);
		return NULL;
	}
	int fd;
	Py_BEGIN_ALLOW_THREADS
	fd = open(PyBytes_AS_STRING(path), O_RDONLY | O_CLOEXEC);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0) {
			close(fd);
			PyErr_Format(PyExc_ValueError, "http.response.pathsend: %R is not a regular file", path_arg);
		} else {
			PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path_arg);
		}
		Py_DECREF(path_arg);
		return NULL;
	}
	Py_DECREF(path_arg);
	m0_response *r = h->conn.resp;
	r->file_fd = fd;
	r->file_offset = 0;
	r->file_length = st.st_size;
	r->content_length = st.st_size;
	r->outcome = M0_COMPLETE;
	m0_asgi_complete(&h->conn);
	return close_request(h) < 0 ? NULL : Py_NewRef(m0_asgi_ready_none);
}

/* send(message): the response's messages in their order. */
static PyObject *request_send(m0_asgi_http *h, PyObject *message)
{
	m0_asgi_conn *c = &h->conn;
	PyObject *kind = m0_asgi_get(message, k_type, NULL);
	if (kind == NULL)
		return NULL;
	int state = h->send_state;
	PyObject *r = NULL;
	if (c->closed && state != DONE)
		PyErr_SetString(m0_asgi_client_disconnected, "the client is gone");
	else if (state == BODY && m0_asgi_is_kind(kind, v_body))
		r = m0_asgi_live(c) ? send_body(h, message) : NULL;
	else if (state == START && m0_asgi_is_kind(kind, v_start))
		r = m0_asgi_live(c) ? send_start(h, message) : NULL;
	else if (state == BODY && !h->streaming && m0_asgi_is_kind(kind, v_pathsend))
		r = m0_asgi_live(c) ? send_path(h, message) : NULL;
	else if (state == TRAILERS && m0_asgi_is_kind(kind, v_trailers))
		r = m0_asgi_live(c) ? send_trailers(h, message) : NULL;
	else if (state == DONE && c->closed && PyUnicode_Check(kind) &&
	         PyUnicode_Tailmatch(kind, v_response_prefix, 0, PY_SSIZE_T_MAX, -1) == 1)
		/* After the response ended: the spec has send raise once the
		 * connection is closed; a later message is the app's error. */
		PyErr_Format(PyExc_RuntimeError, "ASGI message %R after the response was complete", kind);
	else
		PyErr_Format(PyExc_RuntimeError, "unexpected ASGI message %R in response state %s", kind,
		             state_names[state]);
	Py_DECREF(kind);
	return r;
}

static void written(m0_asgi_conn *c)
{
	m0_asgi_http *h = (m0_asgi_http *)c;
	if (!h->finish_on_write || c->ended)
		return;
	h->finish_on_write = 0;
	finish(h);
	close_request(h);
}

static void gone(m0_asgi_conn *c)
{
	((m0_asgi_http *)c)->finish_on_write = 0;
	client_left(c);
}

/* input_ended: receives waiting past the body hear http.disconnect now,
 * later ones at once (request_receive); the body still comes whole, and
 * the response still goes out. */
static void input_ended(m0_asgi_conn *c)
{
	m0_asgi_http *h = (m0_asgi_http *)c;
	if (!h->body_done || c->waiters == NULL)
		return;
	PyObject *m = disconnect_message();
	if (m != NULL)
		m0_asgi_deliver_all(c, m);
	Py_XDECREF(m);
}

/* end: the task is over: a later send raises and a later receive says
 * http.disconnect, and receives still waiting get it now. */
static int end(m0_asgi_conn *c)
{
	m0_asgi_http *h = (m0_asgi_http *)c;
	h->send_state = DONE;
	h->body_done = 1;
	Py_CLEAR(h->stash);
	return close_request(h);
}

static int responded(m0_asgi_conn *c)
{
	return ((m0_asgi_http *)c)->send_state == DONE;
}

static const m0_asgi_kind http_kind = {
    .read = read_back,
    .written = written,
    .gone = gone,
    .input_ended = input_ended,
    .end = end,
    .responded = responded,
};

static int request_traverse(m0_asgi_http *h, visitproc visit, void *arg)
{
	Py_VISIT(h->stash);
	return m0_asgi_conn_traverse(&h->conn, visit, arg);
}

static int request_clear(m0_asgi_http *h)
{
	Py_CLEAR(h->stash);
	m0_asgi_conn_clear(&h->conn);
	return 0;
}

static void request_dealloc(m0_asgi_http *h)
{
	PyObject_GC_UnTrack(h);
	request_clear(h);
	if (h->trailer_fields != NULL)
		m0_response_free(h->trailer_fields);
	PyObject_GC_Del(h);
}

static PyMethodDef request_methods[] = {
    {"send", (PyCFunction)request_send, METH_O, "ASGI send: an awaitable"},
    {"receive", (PyCFunction)request_receive, METH_NOARGS, "ASGI receive: an awaitable"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject request_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_m0asgi.Request",
    .tp_basicsize = sizeof(m0_asgi_http),
    .tp_dealloc = (destructor)request_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "one ASGI HTTP request: its receive and send",
    .tp_traverse = (traverseproc)request_traverse,
    .tp_clear = (inquiry)request_clear,
    .tp_methods = request_methods,
};

/* m0_asgi_request_new makes the request of slot's job, held by the Go
 * slot (m0_asgi_conn_start). */
PyObject *m0_asgi_request_new(m0_asgi *ex, int slot, const m0_request *req,
                              const char *head, m0_response *resp, int writer)
{
	m0_asgi_http *h = PyObject_GC_New(m0_asgi_http, &request_type);
	if (h == NULL)
		return NULL;
	memset((char *)h + sizeof(PyObject), 0, sizeof *h - sizeof(PyObject));
	h->has_body = req->chunked || req->content_length > 0;
	h->body_left = req->chunked ? -1 : req->content_length;
	h->buffer_limit = req->buffer_limit;
	m0_asgi_conn_start(&h->conn, &http_kind, ex, slot, req, head, resp, writer);
	PyObject_GC_Track(h);
	return (PyObject *)h;
}

/* m0_asgi_request_init readies the type and its names. */
int m0_asgi_request_init(PyObject *module)
{
	(void)module;
	static const m0_interned names[] = {
	    {&k_type, "type"},
	    {&k_status, "status"},
	    {&k_headers, "headers"},
	    {&k_trailers, "trailers"},
	    {&k_body, "body"},
	    {&k_more_body, "more_body"},
	    {&k_more_trailers, "more_trailers"},
	    {&k_path, "path"},
	    {&v_start, "http.response.start"},
	    {&v_body, "http.response.body"},
	    {&v_trailers, "http.response.trailers"},
	    {&v_pathsend, "http.response.pathsend"},
	    {&v_request, "http.request"},
	    {&v_disconnect, "http.disconnect"},
	    {&v_response_prefix, "http.response."},
	};
	if (M0_INTERN_ALL(names) < 0)
		return -1;
	if ((empty_tuple == NULL && (empty_tuple = PyTuple_New(0)) == NULL) ||
	    (empty_bytes == NULL && (empty_bytes = PyBytes_FromStringAndSize("", 0)) == NULL))
		return -1;
	return PyType_Ready(&request_type);
}
