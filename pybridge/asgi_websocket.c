/*
 * The ASGI WebSocket connection (asgiref's www spec, websocket scope 2.5):
 * one object per upgrade request, the sibling of asgi_request.c on the
 * same plumbing (asgi_conn.c). Its receive says websocket.connect first,
 * then the client's whole messages in order, then websocket.disconnect,
 * which repeats; its send takes the handshake's answer (accept, close
 * before accept as a 403, or the websocket.http.response denial) and
 * then messages and the close. The Go side (asgi_slot.go) accepts the
 * handshake on the loop and carries messages both ways.
 */
#include "asgi.h"

#include <string.h>

/* Where the handshake stands. */
enum { WS_CONNECT, WS_HANDSHAKE, WS_RESPONSE, WS_OPEN, WS_CLOSED };

typedef struct {
	m0_asgi_conn conn;
	PyObject *messages;     /* client messages no receive has taken yet */
	PyObject *disconnect;   /* websocket.disconnect, once the client is gone */
	PyObject *subprotocols; /* the scope's list: what the client offered */
	PyObject *close_reason; /* a close waiting for the sends before it (bytes) */
	int close_code;
	uint32_t buffer_limit; /* a denial body past it streams (asgi_request.c's rule) */
	uint8_t state, streaming, finish_on_write;
} m0_asgi_ws;

static PyTypeObject ws_type;

static PyObject *k_type, *k_bytes, *k_text, *k_code, *k_reason, *k_subprotocol, *k_headers,
    *k_status, *k_body, *k_more_body, *k_scheme, *k_asgi, *k_method, *k_subprotocols,
    *k_extensions, *v_connect, *v_receive, *v_disconnect, *v_accept, *v_send, *v_close,
    *v_response_start, *v_response_body, *v_websocket, *v_ws, *v_wss, *empty_tuple, *asgi_info,
    *extensions;

static PyObject *message1(PyObject *kind)
{
	return Py_BuildValue("{OO}", k_type, kind);
}

/* ---- from the Go side ---- */

/* deliver_or_queue: to the oldest waiting receive, else queued. The Go
 * side is told a message was taken when a receive gets it. */
static void deliver_or_queue(m0_asgi_ws *w, PyObject *m, int data)
{
	m0_asgi_conn *c = &w->conn;
	if (PyList_GET_SIZE(w->messages) == 0) {
		int rc = m0_asgi_deliver(c, m);
		if (rc != 0) {
			if (rc > 0 && data)
				m0goASGIWSTaken(c->id);
			return;
		}
	}
	if (PyList_Append(w->messages, m) < 0 && data) {
		/* A message lost (out of memory): the app must not go on as if
		 * the stream were whole. The error is the caller's to log. */
		m0goASGIWSClose(c->id, 1011, (char *)"", 0);
	}
}

/* m0_asgi_ws_message: a whole client message of the WebSocket c. */
void m0_asgi_ws_message(m0_asgi_conn *c, int binary, const char *p, long n)
{
	m0_asgi_ws *w = (m0_asgi_ws *)c;
	if (w == NULL || w->conn.ended || Py_TYPE(w) != &ws_type || w->disconnect != NULL)
		return;
	PyObject *payload = binary ? PyBytes_FromStringAndSize(p, n)
	                           : PyUnicode_DecodeUTF8(p, n, "surrogateescape");
	PyObject *m = payload ? Py_BuildValue("{OOOO}", k_type, v_receive, binary ? k_bytes : k_text,
	                                      payload)
	                      : NULL;
	Py_XDECREF(payload);
	if (m != NULL) {
		deliver_or_queue(w, m, 1);
		Py_DECREF(m);
	}
	if (PyErr_Occurred())
		m0_asgi_log_exception(&w->conn, "delivering a WebSocket message failed");
}

static void closed(m0_asgi_ws *w, int code, const char *reason, long n)
{
	m0_asgi_conn *c = &w->conn;
	if (w->disconnect != NULL)
		return;
	c->client_gone = 1;
	if (w->state == WS_OPEN)
		w->state = WS_CLOSED;
	w->disconnect = Py_BuildValue("{OOOiOs#}", k_type, v_disconnect, k_code, code, k_reason,
	                              reason ? reason : "", (Py_ssize_t)n);
	if (w->disconnect != NULL && PyList_GET_SIZE(w->messages) == 0)
		m0_asgi_deliver_all(c, w->disconnect);
}

/* m0_asgi_ws_closed: the WebSocket c ended with the client's code (1005
 * when its Close had none, 1006 when the transport died). */
void m0_asgi_ws_closed(m0_asgi_conn *c, int code, const char *reason, long n)
{
	m0_asgi_ws *w = (m0_asgi_ws *)c;
	if (w == NULL || w->conn.ended || Py_TYPE(w) != &ws_type)
		return;
	closed(w, code, reason, n);
	if (PyErr_Occurred())
		m0_asgi_log_exception(&w->conn, "telling a WebSocket app its client left failed");
}

/* ---- receive ---- */

static PyObject *ws_receive(m0_asgi_ws *w, PyObject *unused)
{
	(void)unused;
	if (w->state == WS_CONNECT) {
		w->state = WS_HANDSHAKE;
		return m0_asgi_ready(message1(v_connect));
	}
	if (PyList_GET_SIZE(w->messages) > 0) {
		PyObject *m = Py_NewRef(PyList_GET_ITEM(w->messages, 0));
		if (PyList_SetSlice(w->messages, 0, 1, NULL) < 0) {
			Py_DECREF(m);
			return NULL;
		}
		m0goASGIWSTaken(w->conn.id);
		return m0_asgi_ready(m);
	}
	if (w->disconnect != NULL)
		return m0_asgi_ready(Py_NewRef(w->disconnect));
	return m0_asgi_wait(&w->conn);
}

/* ---- send ---- */

static PyObject *gone_error(void)
{
	PyErr_SetString(m0_asgi_client_disconnected, "the WebSocket is closed");
	return NULL;
}

static PyObject *accept(m0_asgi_ws *w, PyObject *message)
{
	m0_asgi_conn *c = &w->conn;
	PyObject *protocol = m0_asgi_get(message, k_subprotocol, Py_None);
	if (protocol == NULL)
		return NULL;
	PyObject *encoded = NULL;
	if (protocol != Py_None) {
		int offered = PyUnicode_Check(protocol) ? PySequence_Contains(w->subprotocols, protocol) : 0;
		if (offered <= 0) {
			if (offered == 0)
				PyErr_Format(PyExc_RuntimeError,
				             "websocket.accept: subprotocol %R was not offered by the client",
				             protocol);
			Py_DECREF(protocol);
			return NULL;
		}
		encoded = PyUnicode_AsUTF8String(protocol);
	}
	Py_DECREF(protocol);
	if (protocol != Py_None && encoded == NULL)
		return NULL;
	PyObject *headers = m0_asgi_get(message, k_headers, empty_tuple);
	m0_response *r = c->resp;
	int rc = headers ? m0_asgi_read_fields(r, headers, "websocket.accept header") : -1;
	Py_XDECREF(headers);
	if (rc < 0) {
		Py_XDECREF(encoded);
		return NULL;
	}
	rc = m0goASGIWSAccept(c->id, encoded ? PyBytes_AS_STRING(encoded) : NULL,
	                      encoded ? (size_t)PyBytes_GET_SIZE(encoded) : 0, r);
	Py_XDECREF(encoded);
	if (rc == -2) {
		PyErr_SetString(PyExc_ValueError, "websocket.accept: the server refused its headers or subprotocol");
		return NULL;
	}
	if (rc < 0) {
		/* The client left while the app decided: not the app's error. */
		w->state = WS_CLOSED;
		c->client_gone = 1;
		return gone_error();
	}
	w->state = WS_OPEN;
	r->status = 101;
	r->outcome = M0_UPGRADED;
	m0_asgi_complete(c);
	return Py_NewRef(m0_asgi_ready_none);
}

/* deny answers the handshake with the bridge's 403 (a close before
 * accept). */
static PyObject *deny(m0_asgi_ws *w)
{
	m0_response_plain(w->conn.resp, 403, "Forbidden", 0);
	w->conn.resp->close = 1;
	w->state = WS_CLOSED;
	w->conn.client_gone = 1;
	m0_asgi_complete(&w->conn);
	return Py_NewRef(m0_asgi_ready_none);
}

/* close_after_sends starts the close handshake once the messages sent
 * before it have gone out: now when no write is out, else at the last
 * one's resume (ws_written, ws_gone). 0, or -1. */
static int close_after_sends(m0_asgi_ws *w, int code, const char *reason, Py_ssize_t n)
{
	if (!w->conn.writing) {
		m0goASGIWSClose(w->conn.id, code, (char *)reason, (size_t)n);
		return 0;
	}
	w->close_code = code;
	Py_XSETREF(w->close_reason, PyBytes_FromStringAndSize(reason, n));
	return w->close_reason ? 0 : -1;
}

static void close_waiting(m0_asgi_ws *w)
{
	PyObject *reason = w->close_reason;
	if (reason == NULL)
		return;
	w->close_reason = NULL;
	m0goASGIWSClose(w->conn.id, w->close_code, PyBytes_AS_STRING(reason),
	                (size_t)PyBytes_GET_SIZE(reason));
	Py_DECREF(reason);
}

static PyObject *ws_close(m0_asgi_ws *w, PyObject *message)
{
	PyObject *code = m0_asgi_get(message, k_code, NULL);
	if (code == NULL) {
		if (!PyErr_ExceptionMatches(PyExc_KeyError))
			return NULL;
		PyErr_Clear();
	}
	long n = code && code != Py_None ? PyLong_AsLong(code) : 1000;
	Py_XDECREF(code);
	if (n == -1 && PyErr_Occurred())
		return NULL;
	PyObject *reason = m0_asgi_get(message, k_reason, Py_None);
	if (reason == NULL)
		return NULL;
	const char *text = "";
	Py_ssize_t len = 0;
	if (reason != Py_None && (text = PyUnicode_AsUTF8AndSize(reason, &len)) == NULL) {
		Py_DECREF(reason);
		return NULL;
	}
	w->state = WS_CLOSED;
	w->conn.client_gone = 1; /* a later send raises ClientDisconnected */
	int rc = close_after_sends(w, (int)n, text, len);
	Py_DECREF(reason);
	return rc < 0 ? NULL : Py_NewRef(m0_asgi_ready_none);
}

static PyObject *ws_message(m0_asgi_ws *w, PyObject *message)
{
	PyObject *bytes = m0_asgi_get(message, k_bytes, Py_None);
	PyObject *text = bytes ? m0_asgi_get(message, k_text, Py_None) : NULL;
	PyObject *payload = NULL, *r = NULL;
	int binary = 0;
	if (text == NULL)
		goto out;
	if (bytes != Py_None && text == Py_None) {
		binary = 1;
		payload = m0_asgi_as_bytes(bytes);
	} else if (text != Py_None && bytes == Py_None) {
		payload = PyUnicode_Check(text) ? PyUnicode_AsUTF8String(text) : NULL;
		if (payload == NULL && !PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "websocket.send: text must be str");
	} else {
		PyErr_SetString(PyExc_RuntimeError, "websocket.send needs exactly one of bytes and text");
	}
	if (payload != NULL)
		r = m0_asgi_write_message(&w->conn, payload, binary);
out:
	Py_XDECREF(bytes);
	Py_XDECREF(text);
	Py_XDECREF(payload);
	return r;
}

static PyObject *response_start(m0_asgi_ws *w, PyObject *message)
{
	PyObject *status = m0_asgi_get(message, k_status, NULL);
	PyObject *headers = status ? m0_asgi_get(message, k_headers, empty_tuple) : NULL;
	int rc = headers ? m0_asgi_read_head(w->conn.resp, status, headers) : -1;
	Py_XDECREF(status);
	Py_XDECREF(headers);
	if (rc < 0)
		return NULL;
	/* The connection ends after a denial: the head says so, whether it
	 * goes out with the whole body or ahead of a streamed one. */
	w->conn.resp->close = 1;
	w->state = WS_RESPONSE;
	return Py_NewRef(m0_asgi_ready_none);
}

/* finish_denial: the denial's last byte was sent (or is in the arena). */
static void finish_denial(m0_asgi_ws *w)
{
	m0_response *r = w->conn.resp;
	if (r == NULL)
		return;
	if (w->conn.head_sent) {
		r->outcome = M0_STREAMED;
	} else {
		r->content_length = (int64_t)(r->body.end - r->body.start);
		r->outcome = M0_COMPLETE;
	}
	m0_asgi_complete(&w->conn);
}

/* denial_after_write: the denial body's last write went to the plumbing
 * (r: what the send awaits, or NULL): it ends now when nothing is out,
 * else at the last resume (ws_written). */
static PyObject *denial_after_write(m0_asgi_ws *w, PyObject *r)
{
	if (r != NULL && w->conn.writing)
		w->finish_on_write = 1;
	else if (r != NULL)
		finish_denial(w);
	return r;
}

/* response_body: the denial's body, by http.response.body's rule
 * (asgi_request.c): one message that fits the buffer completes with it;
 * a longer one, or several, go to the writer and their sends wait for
 * it. The arena never takes more than the buffer, so completing never
 * hands the loop more than its outbox holds. */
static PyObject *response_body(m0_asgi_ws *w, PyObject *message)
{
	m0_asgi_conn *c = &w->conn;
	m0_response *r = c->resp;
	PyObject *body = m0_asgi_get(message, k_body, NULL);
	if (body == NULL) {
		if (!PyErr_ExceptionMatches(PyExc_KeyError))
			return NULL;
		PyErr_Clear();
		body = PyBytes_FromStringAndSize("", 0);
	}
	PyObject *b = body ? m0_asgi_as_bytes(body) : NULL;
	Py_XDECREF(body);
	if (b == NULL)
		return NULL;
	PyObject *more = m0_asgi_get(message, k_more_body, Py_False);
	int more_body = more ? PyObject_IsTrue(more) : -1;
	Py_XDECREF(more);
	if (more_body < 0) {
		Py_DECREF(b);
		return NULL;
	}
	Py_ssize_t n = PyBytes_GET_SIZE(b);
	PyObject *fut = NULL;
	if (!more_body && !w->streaming) {
		w->state = WS_CLOSED;
		if ((size_t)n > w->buffer_limit) {
			r->content_length = n;
			fut = denial_after_write(w, m0_asgi_write(c, b, NULL));
			Py_DECREF(b);
			return fut;
		}
		int rc = m0_arena_append(r, PyBytes_AS_STRING(b), (size_t)n, NULL);
		Py_DECREF(b);
		if (rc < 0)
			return PyErr_NoMemory();
		r->body.end = (uint32_t)r->len;
		finish_denial(w);
		return Py_NewRef(m0_asgi_ready_none);
	}
	w->streaming = 1;
	if (n > 0 && (fut = m0_asgi_write(c, b, NULL)) == NULL) {
		Py_DECREF(b);
		return NULL;
	}
	Py_DECREF(b);
	if (!more_body) {
		w->state = WS_CLOSED;
		/* With writes still out, the response ends after them: an
		 * empty write takes its turn. */
		if (fut == NULL && c->writing && (fut = m0_asgi_write(c, NULL, NULL)) == NULL)
			return NULL;
		return denial_after_write(w, fut != NULL ? fut : Py_NewRef(m0_asgi_ready_none));
	}
	return fut != NULL ? fut : Py_NewRef(m0_asgi_ready_none);
}

/* send(message): the handshake's answer, then messages and the close. */
static PyObject *ws_send(m0_asgi_ws *w, PyObject *message)
{
	PyObject *kind = m0_asgi_get(message, k_type, NULL);
	if (kind == NULL)
		return NULL;
	int before = w->state == WS_CONNECT || w->state == WS_HANDSHAKE;
	PyObject *r = NULL;
	if (before && m0_asgi_is_kind(kind, v_accept))
		r = m0_asgi_live(&w->conn) ? accept(w, message) : NULL;
	else if (before && m0_asgi_is_kind(kind, v_close))
		r = m0_asgi_live(&w->conn) ? deny(w) : NULL;
	else if (before && m0_asgi_is_kind(kind, v_response_start))
		r = m0_asgi_live(&w->conn) ? response_start(w, message) : NULL;
	else if (w->state == WS_RESPONSE && m0_asgi_is_kind(kind, v_response_body))
		r = m0_asgi_live(&w->conn) ? response_body(w, message) : NULL;
	else if (w->state == WS_OPEN && m0_asgi_is_kind(kind, v_send))
		r = ws_message(w, message);
	else if (w->state == WS_OPEN && m0_asgi_is_kind(kind, v_close))
		r = ws_close(w, message);
	else if (w->state == WS_CLOSED && w->conn.client_gone)
		r = gone_error();
	else if (w->state == WS_CLOSED && (m0_asgi_is_kind(kind, v_send) || m0_asgi_is_kind(kind, v_close)))
		r = gone_error();
	else
		PyErr_Format(PyExc_RuntimeError, "unexpected ASGI message %R %s", kind,
		             before ? "before websocket.accept" : "in this WebSocket state");
	Py_DECREF(kind);
	return r;
}

/* ---- the plumbing's hooks ---- */

static void ws_read(m0_asgi_conn *c, const char *p, long n)
{
	(void)c, (void)p, (void)n; /* no body reads */
}

static void ws_written(m0_asgi_conn *c)
{
	m0_asgi_ws *w = (m0_asgi_ws *)c;
	close_waiting(w);
	if (w->finish_on_write && !c->ended) {
		w->finish_on_write = 0;
		finish_denial(w);
	}
}

/* ws_gone: the client left before the accept (1006), or a send found
 * the connection closed: then later sends raise, and the disconnect with
 * the client's code comes from the loop (m0_asgi_ws_closed), after the
 * messages before it. */
static void ws_gone(m0_asgi_conn *c)
{
	((m0_asgi_ws *)c)->finish_on_write = 0;
	close_waiting((m0_asgi_ws *)c);
	if (((m0_asgi_ws *)c)->state == WS_OPEN)
		return;
	closed((m0_asgi_ws *)c, 1006, NULL, 0);
}

static void ws_input_ended(m0_asgi_conn *c)
{
	(void)c; /* the loop ends a WebSocket on its own (1006) */
}

/* ws_end: the app is over. An open connection is closed for it: 1000,
 * or 1011 after the app raised. */
static int ws_end(m0_asgi_conn *c)
{
	m0_asgi_ws *w = (m0_asgi_ws *)c;
	if (w->state == WS_OPEN) {
		w->state = WS_CLOSED;
		if (close_after_sends(w, c->app_failed ? 1011 : 1000, "", 0) < 0)
			return -1;
	}
	Py_CLEAR(w->messages);
	w->messages = PyList_New(0);
	if (w->disconnect == NULL)
		w->disconnect = Py_BuildValue("{OOOiOs}", k_type, v_disconnect, k_code, 1000, k_reason, "");
	if (w->disconnect == NULL || w->messages == NULL)
		return -1;
	return m0_asgi_deliver_all(c, w->disconnect);
}

static int ws_responded(m0_asgi_conn *c)
{
	uint8_t state = ((m0_asgi_ws *)c)->state;
	return state == WS_OPEN || state == WS_CLOSED;
}

static const m0_asgi_kind ws_kind = {
    .read = ws_read,
    .written = ws_written,
    .gone = ws_gone,
    .input_ended = ws_input_ended,
    .end = ws_end,
    .responded = ws_responded,
};

static int ws_traverse(m0_asgi_ws *w, visitproc visit, void *arg)
{
	Py_VISIT(w->messages);
	Py_VISIT(w->disconnect);
	Py_VISIT(w->subprotocols);
	Py_VISIT(w->close_reason);
	return m0_asgi_conn_traverse(&w->conn, visit, arg);
}

static int ws_clear(m0_asgi_ws *w)
{
	Py_CLEAR(w->messages);
	Py_CLEAR(w->disconnect);
	Py_CLEAR(w->subprotocols);
	Py_CLEAR(w->close_reason);
	m0_asgi_conn_clear(&w->conn);
	return 0;
}

static void ws_dealloc(m0_asgi_ws *w)
{
	PyObject_GC_UnTrack(w);
	ws_clear(w);
	PyObject_GC_Del(w);
}

static PyMethodDef ws_methods[] = {
    {"send", (PyCFunction)ws_send, METH_O, "ASGI send: an awaitable"},
    {"receive", (PyCFunction)ws_receive, METH_NOARGS, "ASGI receive: an awaitable"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ws_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_m0asgi.WebSocket",
    .tp_basicsize = sizeof(m0_asgi_ws),
    .tp_dealloc = (destructor)ws_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "one ASGI WebSocket connection: its receive and send",
    .tp_traverse = (traverseproc)ws_traverse,
    .tp_clear = (inquiry)ws_clear,
    .tp_methods = ws_methods,
};

/* subprotocols: the Sec-WebSocket-Protocol values' tokens, in order. */
static PyObject *subprotocols(const m0_request *req, const char *head, const m0_field *fields)
{
	PyObject *list = PyList_New(0);
	for (uint32_t i = 0; list != NULL && i < req->nfields; i++) {
		const m0_field *f = &fields[i];
		const char *name = head + f->name.start;
		size_t nlen = f->name.end - f->name.start;
		if (nlen != 22 || strncasecmp(name, "sec-websocket-protocol", 22) != 0)
			continue;
		const char *p = head + f->value.start, *end = head + f->value.end;
		while (p < end) {
			const char *comma = memchr(p, ',', (size_t)(end - p));
			const char *stop = comma ? comma : end, *a = p, *b = stop;
			while (a < b && (*a == ' ' || *a == '\t'))
				a++;
			while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
				b--;
			if (b > a) {
				PyObject *s = PyUnicode_DecodeLatin1(a, b - a, NULL);
				if (s == NULL || PyList_Append(list, s) < 0)
					Py_CLEAR(list);
				Py_XDECREF(s);
				if (list == NULL)
					break;
			}
			p = stop + 1;
		}
	}
	return list;
}

/* m0_asgi_websocket_scope turns an HTTP scope into the websocket one. */
int m0_asgi_websocket_scope(PyObject *scope, PyObject *conn)
{
	m0_asgi_ws *w = (m0_asgi_ws *)conn;
	PyObject *scheme = PyDict_GetItemWithError(scope, k_scheme);
	int secure = scheme != NULL && PyUnicode_Check(scheme) &&
	             PyUnicode_CompareWithASCIIString(scheme, "https") == 0;
	/* The TLS extension (tls_facts.c) stays in the websocket scope's. */
	PyObject *old = PyDict_GetItemWithError(scope, k_extensions);
	PyObject *tls = old != NULL && PyDict_Check(old) ? PyDict_GetItemString(old, "tls") : NULL;
	Py_XINCREF(tls);
	PyObject *ext = PyDict_Copy(extensions);
	if (ext == NULL || (tls != NULL && PyDict_SetItemString(ext, "tls", tls) < 0)) {
		Py_XDECREF(tls);
		Py_XDECREF(ext);
		return -1;
	}
	Py_XDECREF(tls);
	if (m0_set_steal(scope, k_extensions, ext) < 0 ||
	    PyDict_SetItem(scope, k_type, v_websocket) < 0 ||
	    PyDict_SetItem(scope, k_scheme, secure ? v_wss : v_ws) < 0 ||
	    PyDict_SetItem(scope, k_asgi, asgi_info) < 0 ||
	    PyDict_SetItem(scope, k_subprotocols, w->subprotocols) < 0)
		return -1;
	if (PyDict_DelItem(scope, k_method) < 0)
		PyErr_Clear();
	return 0;
}

PyObject *m0_asgi_websocket_new(m0_asgi *ex, int slot, const m0_request *req, const char *head,
                                const m0_field *fields, m0_response *resp)
{
	m0_asgi_ws *w = PyObject_GC_New(m0_asgi_ws, &ws_type);
	if (w == NULL)
		return NULL;
	memset((char *)w + sizeof(PyObject), 0, sizeof *w - sizeof(PyObject));
	/* What can fail comes before the Go slot's reference is taken:
	 * a failed start leaves the slot empty. */
	if ((w->messages = PyList_New(0)) == NULL ||
	    (w->subprotocols = subprotocols(req, head, fields)) == NULL) {
		Py_DECREF(w);
		return NULL;
	}
	m0_asgi_conn_start(&w->conn, &ws_kind, ex, slot, req, head, resp, 1);
	w->buffer_limit = req->buffer_limit;
	PyObject_GC_Track(w);
	return (PyObject *)w;
}

int m0_asgi_websocket_init(void)
{
	static const m0_interned names[] = {
	    {&k_type, "type"},
	    {&k_bytes, "bytes"},
	    {&k_text, "text"},
	    {&k_code, "code"},
	    {&k_reason, "reason"},
	    {&k_subprotocol, "subprotocol"},
	    {&k_headers, "headers"},
	    {&k_status, "status"},
	    {&k_body, "body"},
	    {&k_more_body, "more_body"},
	    {&k_scheme, "scheme"},
	    {&k_asgi, "asgi"},
	    {&k_method, "method"},
	    {&k_subprotocols, "subprotocols"},
	    {&k_extensions, "extensions"},
	    {&v_connect, "websocket.connect"},
	    {&v_receive, "websocket.receive"},
	    {&v_disconnect, "websocket.disconnect"},
	    {&v_accept, "websocket.accept"},
	    {&v_send, "websocket.send"},
	    {&v_close, "websocket.close"},
	    {&v_response_start, "websocket.http.response.start"},
	    {&v_response_body, "websocket.http.response.body"},
	    {&v_websocket, "websocket"},
	    {&v_ws, "ws"},
	    {&v_wss, "wss"},
	};
	if (M0_INTERN_ALL(names) < 0)
		return -1;
	if (empty_tuple == NULL && (empty_tuple = PyTuple_New(0)) == NULL)
		return -1;
	if (asgi_info == NULL &&
	    (asgi_info = Py_BuildValue("{ssss}", "version", "3.0", "spec_version", "2.5")) == NULL)
		return -1;
	if (extensions == NULL && (extensions = Py_BuildValue("{s{}}", "websocket.http.response")) == NULL)
		return -1;
	return PyType_Ready(&ws_type);
}
