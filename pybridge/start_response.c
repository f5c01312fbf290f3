/*
 * start_response and write(), PEP 3333: the head is validated as it is
 * given (status "NNN reason"; (str, str) latin-1 fields, token names, no
 * control characters) and copied into the job's arena at once, so
 * nothing of it stays a Python object. A hop-by-hop field is not copied
 * (m0_hop_by_hop_field).
 */
#include "shim.h"

#include <stddef.h>
#include <string.h>

/* The write callable has the same shape: a thread and a request. */
typedef struct m0_start_response m0_write;

static int check_request(m0_thread *t, uint64_t generation, const char *what)
{
	if (t == NULL || generation != t->generation) {
		PyErr_Format(PyExc_RuntimeError, "%s called after its request ended", what);
		return -1;
	}
	return 0;
}

/* tchar, RFC 9110 §5.6.2, as a table: a strchr per byte was visible in
 * the profile of a two-header response. */
static const uint8_t tchar[256] = {
    ['0' ... '9'] = 1, ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1,
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
    ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
    ['`'] = 1, ['|'] = 1, ['~'] = 1,
};

static int is_tchar(unsigned char c)
{
	return tchar[c];
}

/* Field values and reason phrases: HTAB, SP, VCHAR, obs-text
 * (RFC 9110 §5.5, RFC 9112 §4); anything else, CR LF NUL first, could
 * split the response. */
static int is_text(const unsigned char *p, Py_ssize_t n)
{
	for (Py_ssize_t i = 0; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
			return 0;
	return 1;
}

/* Hop-by-hop fields belong to the server (PEP 3333, "Other HTTP
 * Features"; RFC 9110 §7.6.1, which adds Proxy-Connection). */
static int is_hop_by_hop(const char *p, Py_ssize_t n)
{
#define NAME(s) {s, sizeof s - 1}
	static const struct {
		const char *name;
		Py_ssize_t len;
	} names[] = {
	    NAME("connection"), NAME("keep-alive"), NAME("proxy-authenticate"),
	    NAME("proxy-authorization"), NAME("proxy-connection"), NAME("te"),
	    NAME("trailers"), NAME("transfer-encoding"), NAME("upgrade"),
	};
#undef NAME
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (names[i].len != n)
			continue;
		/* | 0x20 folds ASCII letters; '-' already has the bit. */
		Py_ssize_t j = 0;
		while (j < n && (p[j] | 0x20) == names[i].name[j])
			j++;
		if (j == n)
			return 1;
	}
	return 0;
}

/* latin1_data gives a str's latin-1 bytes without encoding: a 1-byte-kind
 * str stores exactly them. A wider kind holds a code point over U+00FF,
 * which latin-1 cannot carry. */
static const unsigned char *latin1_data(PyObject *s, Py_ssize_t *n)
{
	if (!PyUnicode_Check(s) || PyUnicode_KIND(s) != PyUnicode_1BYTE_KIND)
		return NULL;
	*n = PyUnicode_GET_LENGTH(s);
	return PyUnicode_1BYTE_DATA(s);
}

static int set_head(m0_thread *t, PyObject *status, PyObject *headers)
{
	m0_response *r = t->resp;
	Py_ssize_t sn;
	const unsigned char *s = latin1_data(status, &sn);
	if (s == NULL || sn < 4 || s[0] < '1' || s[0] > '9' || s[1] < '0' ||
	    s[1] > '9' || s[2] < '0' || s[2] > '9' || s[3] != ' ' || !is_text(s, sn)) {
		PyErr_Format(PyExc_ValueError,
		             "status must be a latin-1 str \"NNN reason\", got %R", status);
		return -1;
	}
	if (!PyList_Check(headers) && !PyTuple_Check(headers)) {
		PyErr_Format(PyExc_TypeError, "response headers must be a list, got %.100s",
		             Py_TYPE(headers)->tp_name);
		return -1;
	}
	m0_response_reset(r);
	r->status = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
	if (m0_arena_append(r, (const char *)s + 4, (size_t)(sn - 4), &r->reason) < 0)
		goto nomem;
	Py_ssize_t count = PySequence_Fast_GET_SIZE(headers);
	PyObject **items = PySequence_Fast_ITEMS(headers);
	for (Py_ssize_t i = 0; i < count; i++) {
		PyObject *pair = items[i];
		Py_ssize_t nn, vn;
		const unsigned char *name, *value;
		if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
		    (name = latin1_data(PyTuple_GET_ITEM(pair, 0), &nn)) == NULL ||
		    (value = latin1_data(PyTuple_GET_ITEM(pair, 1), &vn)) == NULL) {
			PyErr_Format(PyExc_TypeError,
			             "response header %R: want a (str, str) tuple, latin-1", pair);
			goto fail;
		}
		Py_ssize_t j = 0;
		while (j < nn && is_tchar(name[j]))
			j++;
		if (nn == 0 || j < nn || !is_text(value, vn)) {
			PyErr_Format(PyExc_ValueError,
			             "response header %R: bad name or a control character "
			             "(CR, LF, NUL) in it",
			             pair);
			goto fail;
		}
		if (is_hop_by_hop((const char *)name, nn)) {
			if (m0_hop_by_hop_field(r, name, nn, value, vn) < 0)
				goto nomem;
			continue;
		}
		if (m0_arena_add_header(r, (const char *)name, (size_t)nn,
		                        (const char *)value, (size_t)vn) < 0)
			goto nomem;
	}
	return 0;
nomem:
	PyErr_NoMemory();
fail:
	m0_response_reset(r);
	t->head_set = 0;
	return -1;
}

/* start_response is a vectorcall: the app's call builds no argument
 * tuple. */
static PyObject *start_response_call(PyObject *callable, PyObject *const *args,
                                     size_t nargsf, PyObject *kwnames)
{
	m0_start_response *self = (m0_start_response *)callable;
	m0_thread *t = self->thread;
	if (check_request(t, self->generation, "start_response") < 0)
		return NULL;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	PyObject *exc_info = nargs == 3 ? args[2] : NULL;
	if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
		if (PyTuple_GET_SIZE(kwnames) != 1 || exc_info != NULL ||
		    !PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) ||
		    PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "exc_info") != 0) {
			PyErr_SetString(PyExc_TypeError,
			                "start_response(status, headers, exc_info=None)");
			return NULL;
		}
		exc_info = args[nargs];
	}
	if (nargs < 2 || nargs > 3) {
		PyErr_SetString(PyExc_TypeError, "start_response(status, headers, exc_info=None)");
		return NULL;
	}
	if (exc_info != NULL && exc_info != Py_None) {
		if (t->committed) {
			/* PEP 3333: the head is final; re-raise the app's error so
			 * the response ends in the error path. */
			if (!PyTuple_Check(exc_info) || PyTuple_GET_SIZE(exc_info) != 3) {
				PyErr_SetString(PyExc_TypeError, "exc_info must be a 3-tuple");
				return NULL;
			}
			PyObject *type = PyTuple_GET_ITEM(exc_info, 0);
			PyObject *value = PyTuple_GET_ITEM(exc_info, 1);
			PyObject *tb = PyTuple_GET_ITEM(exc_info, 2);
			Py_INCREF(type);
			Py_INCREF(value);
			if (tb == Py_None)
				tb = NULL;
			Py_XINCREF(tb);
			PyErr_Restore(type, value, tb);
			return NULL;
		}
	} else if (t->head_set) {
		PyErr_SetString(PyExc_RuntimeError,
		                "start_response called a second time without exc_info");
		return NULL;
	}
	if (set_head(t, args[0], args[1]) < 0)
		return NULL;
	t->head_set = 1;
	return Py_NewRef(t->write);
}

static PyObject *write_call(m0_write *self, PyObject *args, PyObject *kwargs)
{
	m0_thread *t = self->thread;
	if (check_request(t, self->generation, "write") < 0)
		return NULL;
	if (kwargs != NULL || PyTuple_GET_SIZE(args) != 1 ||
	    !PyBytes_Check(PyTuple_GET_ITEM(args, 0))) {
		PyErr_SetString(PyExc_TypeError, "write(data) takes one bytes object");
		return NULL;
	}
	PyObject *data = PyTuple_GET_ITEM(args, 0);
	if (PyBytes_GET_SIZE(data) > 0) {
		int rc = m0_emit(t, data);
		if (rc == -2)
			PyErr_SetString(PyExc_OSError, "write: the client went away");
		if (rc < 0)
			return NULL;
	}
	Py_RETURN_NONE;
}

static void callable_dealloc(PyObject *self)
{
	Py_TYPE(self)->tp_free(self);
}

static PyTypeObject StartResponseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "m0serve.StartResponse",
    .tp_basicsize = sizeof(m0_start_response),
    .tp_dealloc = callable_dealloc,
    .tp_vectorcall_offset = offsetof(m0_start_response, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "start_response(status, headers, exc_info=None) -> write",
};

static PyTypeObject WriteType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "m0serve.Write",
    .tp_basicsize = sizeof(m0_write),
    .tp_dealloc = callable_dealloc,
    .tp_call = (ternaryfunc)write_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "write(data): the imperative body API of PEP 3333",
};

m0_start_response *m0_start_response_new(m0_thread *t)
{
	m0_start_response *s = PyObject_New(m0_start_response, &StartResponseType);
	if (s != NULL) {
		s->thread = t;
		s->generation = 0;
		s->vectorcall = start_response_call;
	}
	return s;
}

PyObject *m0_write_new(m0_thread *t)
{
	m0_write *w = PyObject_New(m0_write, &WriteType);
	if (w != NULL) {
		w->thread = t;
		w->generation = 0;
		w->vectorcall = NULL;
	}
	return (PyObject *)w;
}

void m0_callable_detach(PyObject *callable)
{
	((m0_start_response *)callable)->thread = NULL;
}

int m0_start_response_ready(void)
{
	if (PyType_Ready(&StartResponseType) < 0 || PyType_Ready(&WriteType) < 0)
		return -1;
	return 0;
}

/* m0_field_check applies the checks above to one response field of any
 * interface (the ASGI head reads bytes): 0 good, 1 a hop-by-hop field, -1
 * a bad name or a control character in the value. No exception is set. */
int m0_field_check(const unsigned char *name, Py_ssize_t nn,
                   const unsigned char *value, Py_ssize_t vn)
{
	if (nn <= 0 || !is_text(value, vn))
		return -1;
	for (Py_ssize_t j = 0; j < nn; j++)
		if (!is_tchar(name[j]))
			return -1;
	return is_hop_by_hop((const char *)name, nn) ? 1 : 0;
}

/* has_close reports a "close" option in a Connection value (a
 * comma-separated list, RFC 9110 §7.6.1). */
static int has_close(const unsigned char *v, Py_ssize_t n)
{
	Py_ssize_t i = 0;
	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		Py_ssize_t start = i;
		while (i < n && v[i] != ',')
			i++;
		Py_ssize_t end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (end - start == 5) {
			Py_ssize_t j = 0;
			while (j < 5 && (v[start + j] | 0x20) == "close"[j])
				j++;
			if (j == 5)
				return 1;
		}
	}
	return 0;
}

/* m0_hop_by_hop_field takes a hop-by-hop field the app set, of any
 * interface, instead of failing the request (gunicorn and uvicorn serve
 * it): "Connection: close" becomes the app's wish to close after this
 * response; any other is dropped, the first one's name kept for the
 * server's warning. The field itself never goes out: the server frames
 * the message and owns the connection. 0, or -1 out of memory. */
int m0_hop_by_hop_field(m0_response *r, const unsigned char *name, Py_ssize_t nn,
                        const unsigned char *value, Py_ssize_t vn)
{
	if (nn == 10 && PyOS_strnicmp((const char *)name, "connection", 10) == 0) {
		/* Connection: its other options (keep-alive) are the server's. */
		if (has_close(value, vn))
			r->close = 1;
		return 0;
	}
	if (r->dropped.end != r->dropped.start)
		return 0;
	return m0_arena_append(r, (const char *)name, (size_t)nn, &r->dropped);
}
