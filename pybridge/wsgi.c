/*
 * One WSGI request in one call: environ, the app, start_response and
 * write(), the response iterable, close(). The head and a buffered body go
 * into the job's arena; a streamed body goes to the Go stream chunk by
 * chunk, with the GIL released while the stream may block.
 */
#include "shim.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <string.h>

struct m0_start_response {
	PyObject_HEAD
	m0_thread *thread;
	uint64_t generation;
	vectorcallfunc vectorcall;
};

static PyObject *s_close; /* "close", interned */

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

/* commit makes the head final at the first body byte: a streamed head goes
 * out here. Returns -1 with an exception set, -2 when the client is gone. */
static int commit(m0_thread *t)
{
	if (t->committed)
		return 0;
	if (!t->head_set) {
		PyErr_SetString(PyExc_RuntimeError,
		                "the application produced body data before calling start_response");
		return -1;
	}
	t->committed = 1;
	if (!t->streaming) {
		t->resp->body.start = t->resp->body.end = (uint32_t)t->resp->len;
		return 0;
	}
	int rc, id = t->id;
	Py_BEGIN_ALLOW_THREADS
	rc = m0goStream(id, M0_STREAM_HEAD, NULL, 0);
	Py_END_ALLOW_THREADS
	if (rc < 0) {
		t->client_gone = 1;
		return -2;
	}
	t->head_sent = 1;
	return 0;
}

/* emit sends one non-empty body chunk: same return values as commit. */
static int emit(m0_thread *t, PyObject *chunk)
{
	int rc = commit(t);
	if (rc < 0)
		return rc;
	char *p = PyBytes_AS_STRING(chunk);
	size_t n = (size_t)PyBytes_GET_SIZE(chunk);
	if (!t->streaming) {
		if (m0_arena_append(t->resp, p, n, NULL) < 0) {
			PyErr_NoMemory();
			return -1;
		}
		t->resp->body.end = (uint32_t)t->resp->len;
		return 0;
	}
	/* The chunk stays referenced by the caller while the GIL is released,
	 * and bytes are immutable: p stays valid. */
	int id = t->id;
	Py_BEGIN_ALLOW_THREADS
	rc = m0goStream(id, M0_STREAM_WRITE, p, n);
	Py_END_ALLOW_THREADS
	if (rc < 0) {
		t->client_gone = 1;
		return -2;
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
 * Features"; RFC 9110 §7.6.1). */
static int is_hop_by_hop(const char *p, Py_ssize_t n)
{
#define NAME(s) {s, sizeof s - 1}
	static const struct {
		const char *name;
		Py_ssize_t len;
	} names[] = {
	    NAME("connection"), NAME("keep-alive"), NAME("proxy-authenticate"),
	    NAME("proxy-authorization"), NAME("te"), NAME("trailers"),
	    NAME("transfer-encoding"), NAME("upgrade"),
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
		for (Py_ssize_t j = 0; j < nn; j++)
			if (!is_tchar(name[j]))
				nn = -1;
		if (nn <= 0 || !is_text(value, vn)) {
			PyErr_Format(PyExc_ValueError,
			             "response header %R: bad name or a control character "
			             "(CR, LF, NUL) in it",
			             pair);
			goto fail;
		}
		if (is_hop_by_hop((const char *)name, nn)) {
			PyErr_Format(PyExc_ValueError,
			             "response header %R is hop-by-hop: the server owns it", pair);
			goto fail;
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
		int rc = emit(t, data);
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

/* wsgi.file_wrapper: iterates filelike.read(blksize) and closes it. */
typedef struct {
	PyObject_HEAD
	PyObject *filelike;
	Py_ssize_t blksize;
} file_wrapper;

static PyObject *file_wrapper_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"filelike", "blksize", NULL};
	PyObject *filelike;
	Py_ssize_t blksize = 8192;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|n:file_wrapper", kwlist,
	                                 &filelike, &blksize))
		return NULL;
	file_wrapper *w = (file_wrapper *)type->tp_alloc(type, 0);
	if (w != NULL) {
		w->filelike = Py_NewRef(filelike);
		w->blksize = blksize > 0 ? blksize : 8192;
	}
	return (PyObject *)w;
}

static PyObject *file_wrapper_next(file_wrapper *w)
{
	PyObject *data = PyObject_CallMethod(w->filelike, "read", "n", w->blksize);
	if (data != NULL && PyObject_Length(data) == 0) {
		Py_DECREF(data);
		return NULL;
	}
	return data;
}

static PyObject *file_wrapper_close(file_wrapper *w, PyObject *unused)
{
	(void)unused;
	if (PyObject_HasAttrString(w->filelike, "close"))
		return PyObject_CallMethod(w->filelike, "close", NULL);
	Py_RETURN_NONE;
}

static void file_wrapper_dealloc(file_wrapper *w)
{
	Py_XDECREF(w->filelike);
	Py_TYPE(w)->tp_free((PyObject *)w);
}

static PyMethodDef file_wrapper_methods[] = {
    {"close", (PyCFunction)file_wrapper_close, METH_NOARGS, "close the file"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject m0_FileWrapperType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "m0serve.FileWrapper",
    .tp_basicsize = sizeof(file_wrapper),
    .tp_dealloc = (destructor)file_wrapper_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "wsgi.file_wrapper(filelike, blksize=8192)",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)file_wrapper_next,
    .tp_methods = file_wrapper_methods,
    .tp_new = file_wrapper_new,
};

int m0_wsgi_ready(void)
{
	if ((s_close = PyUnicode_InternFromString("close")) == NULL)
		return -1;
	if (PyType_Ready(&StartResponseType) < 0 || PyType_Ready(&WriteType) < 0 ||
	    PyType_Ready(&m0_FileWrapperType) < 0)
		return -1;
	return 0;
}

/* file_response answers a wsgi.file_wrapper over a regular file with the
 * file itself: the Go side sends it (sendfile) without its bytes passing
 * through Python. 0 done, 1 not a plain file (iterate it instead), -1
 * exception. */
static int file_response(m0_thread *t, file_wrapper *w)
{
	if (!t->head_set || t->committed)
		return 1;
	PyObject *r = PyObject_CallMethod(w->filelike, "fileno", NULL);
	int fd = r ? PyLong_AsLong(r) : -1;
	Py_XDECREF(r);
	if (fd < 0) {
		PyErr_Clear(); /* BytesIO and friends: no descriptor */
		return 1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 1;
	/* tell(), not lseek: a buffered reader's descriptor may be ahead of
	 * what the app has read. */
	int64_t offset = 0;
	r = PyObject_CallMethod(w->filelike, "tell", NULL);
	if (r != NULL)
		offset = PyLong_AsLongLong(r);
	Py_XDECREF(r);
	if (PyErr_Occurred() || offset < 0) {
		PyErr_Clear();
		return 1;
	}
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup < 0)
		return PyErr_SetFromErrno(PyExc_OSError), -1;
	m0_response *resp = t->resp;
	t->committed = 1;
	resp->body.start = resp->body.end = (uint32_t)resp->len;
	resp->file_fd = dup;
	resp->file_offset = offset;
	resp->file_length = st.st_size > offset ? st.st_size - offset : 0;
	return 0;
}

/* stream_sequence sends a list or tuple of bytes through the Go stream,
 * its length known: a body over the job's buffer limit, which the server
 * could not take whole without blocking while the GIL is held. Items are
 * re-read and held per step: another Python thread may change the list
 * while the GIL is released. */
static int stream_sequence(m0_thread *t, PyObject *seq, size_t total)
{
	t->resp->content_length = (int64_t)total;
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
		if (!PyBytes_Check(item)) {
			PyErr_Format(PyExc_TypeError,
			             "the application's body must be bytes, got %.100s",
			             Py_TYPE(item)->tp_name);
			return -1;
		}
		if (PyBytes_GET_SIZE(item) == 0)
			continue;
		Py_INCREF(item);
		int rc = emit(t, item);
		Py_DECREF(item);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* read_result drains the app's iterable: 0 done, -1 exception, -2 client
 * gone. A list or tuple of bytes is copied in one pass with its length
 * known, unless a streamed head already went out through write(). */
static int read_result(m0_thread *t, PyObject *result)
{
	if ((PyList_CheckExact(result) || PyTuple_CheckExact(result)) &&
	    !t->head_sent) {
		Py_ssize_t n = PySequence_Fast_GET_SIZE(result);
		PyObject **items = PySequence_Fast_ITEMS(result);
		size_t total = 0;
		Py_ssize_t i;
		for (i = 0; i < n && PyBytes_CheckExact(items[i]); i++)
			total += (size_t)PyBytes_GET_SIZE(items[i]);
		if (i == n) {
			if (!t->head_set) {
				PyErr_SetString(PyExc_RuntimeError,
				                "the application returned without calling start_response");
				return -1;
			}
			m0_response *r = t->resp;
			if (t->streaming && !t->committed && total > t->buffer_limit)
				return stream_sequence(t, result, total);
			if (!t->committed) {
				t->committed = 1;
				r->body.start = r->body.end = (uint32_t)r->len;
			}
			if (m0_arena_reserve(r, total) < 0) {
				PyErr_NoMemory();
				return -1;
			}
			for (i = 0; i < n; i++)
				m0_arena_append(r, PyBytes_AS_STRING(items[i]),
				                (size_t)PyBytes_GET_SIZE(items[i]), NULL);
			r->body.end = (uint32_t)r->len;
			return 0;
		}
	}
	if (Py_TYPE(result) == &m0_FileWrapperType) {
		int rc = file_response(t, (file_wrapper *)result);
		if (rc <= 0)
			return rc;
	}
	PyObject *it = PyObject_GetIter(result);
	if (it == NULL)
		return -1;
	int rc = 0;
	PyObject *chunk;
	while ((chunk = PyIter_Next(it)) != NULL) {
		if (!PyBytes_Check(chunk)) {
			PyErr_Format(PyExc_TypeError,
			             "the application's body must be bytes, got %.100s",
			             Py_TYPE(chunk)->tp_name);
			rc = -1;
		} else if (PyBytes_GET_SIZE(chunk) > 0) {
			rc = emit(t, chunk);
		}
		Py_DECREF(chunk);
		if (rc < 0)
			break;
	}
	Py_DECREF(it);
	if (rc == 0 && PyErr_Occurred())
		rc = -1;
	if (rc == 0 && !t->head_set) {
		PyErr_SetString(PyExc_RuntimeError,
		                "the application returned without calling start_response");
		rc = -1;
	}
	return rc;
}

/* internal_error replaces whatever head was set with a plain 500. */
static void internal_error(m0_response *r)
{
	static const char body[] = "Internal Server Error\n";
	m0_response_reset(r);
	r->status = 500;
	r->app_error = 1;
	m0_arena_append(r, "Internal Server Error", 21, &r->reason);
	m0_arena_add_header(r, "Content-Type", 12, "text/plain; charset=utf-8", 25);
	m0_arena_append(r, body, sizeof body - 1, &r->body);
	r->content_length = (int64_t)(sizeof body - 1);
	r->outcome = M0_COMPLETE;
}

/* log_failure prints the raised exception after a line naming the
 * request: a traceback alone does not say which URL failed. */
static void log_failure(m0_thread *t, const char *context)
{
	const m0_span *m = &t->req->method, *tg = &t->req->target;
	int mlen = (int)(m->end - m->start), tlen = (int)(tg->end - tg->start);
	PySys_WriteStderr("m0serve: %.*s %.*s: ", mlen > 16 ? 16 : mlen,
	                  t->head + m->start, tlen > 200 ? 200 : tlen, t->head + tg->start);
	m0_log_exception(context);
}

/* fail logs the raised exception and records the outcome: a 500 while
 * nothing has gone out, an abort after. A client that left, or whose body
 * broke off, is not the app's error: no traceback, an abort (the server
 * knows why from Job.BodyErr). */
static void fail(m0_thread *t, const char *context)
{
	if (t->client_gone || t->body_failed) {
		PyErr_Clear();
		t->resp->outcome = M0_ABORTED;
		return;
	}
	log_failure(t, context);
	if (t->head_sent) {
		t->resp->outcome = M0_ABORTED;
		t->resp->app_error = 1;
		return;
	}
	internal_error(t->resp);
}

/* close_result calls result.close() if it has one. A missing attribute is
 * looked up without raising: a raised-and-cleared AttributeError per
 * request cost more than the rest of the call for a list body. */
static void close_result(m0_thread *t, PyObject *result)
{
	if (PyList_CheckExact(result) || PyTuple_CheckExact(result))
		return;
	PyObject *close = NULL;
#if PY_VERSION_HEX >= 0x030D0000
	int found = PyObject_GetOptionalAttr(result, s_close, &close);
#else
	int found = _PyObject_LookupAttr(result, s_close, &close);
#endif
	if (found <= 0) {
		if (found < 0)
			log_failure(t, "looking up the WSGI response's close() raised");
		return;
	}
	PyObject *r = PyObject_CallNoArgs(close);
	Py_DECREF(close);
	if (r == NULL)
		log_failure(t, "the WSGI response's close() raised");
	Py_XDECREF(r);
}

/* renew swaps *obj for a fresh one when something beyond the thread still
 * holds it, so a kept object never acts on a later request. */
static int renew(PyObject **obj, PyObject *fresh)
{
	if (fresh == NULL)
		return -1;
	Py_DECREF(*obj);
	*obj = fresh;
	return 0;
}

void m0_wsgi_serve(m0_thread *t, m0_app *app, const m0_request *req,
                   const char *head, const m0_field *fields,
                   const char *remote, m0_response *resp, int mode)
{
	t->generation++;
	t->resp = resp;
	t->req = req;
	t->head = head;
	t->streaming = mode == M0_SERVE_FULL && req->stream;
	t->buffer_limit = req->buffer_limit;
	t->head_set = t->committed = t->head_sent = t->client_gone = 0;
	t->body_failed = 0;
	m0_response_reset(resp);
	m0_response_trim(resp);
	if ((Py_REFCNT(t->start_response) != 1 &&
	     renew((PyObject **)&t->start_response,
	           (PyObject *)m0_start_response_new(t)) < 0) ||
	    (Py_REFCNT(t->write) != 1 && renew(&t->write, m0_write_new(t)) < 0) ||
	    m0_input_reuse(t, req) < 0) {
		fail(t, "cannot set up a WSGI request");
		return;
	}
	t->start_response->generation = t->generation;
	((m0_write *)t->write)->generation = t->generation;

	PyObject *env = m0_environ_build(t, app, req, head, fields, remote);
	if (env == NULL) {
		fail(t, "cannot build the WSGI environ");
		goto out;
	}
	if (mode == M0_SERVE_ENVIRON) {
		Py_DECREF(env);
		resp->outcome = M0_COMPLETE;
		goto out;
	}
	PyObject *args[2] = {env, (PyObject *)t->start_response};
	PyObject *result = PyObject_Vectorcall(app->app, args, 2, NULL);
	Py_DECREF(env);
	if (result == NULL) {
		fail(t, "the WSGI application raised");
		goto out;
	}
	int rc = mode == M0_SERVE_CALL ? 0 : read_result(t, result);
	if (rc < 0)
		fail(t, "the WSGI application's response failed");
	close_result(t, result);
	Py_DECREF(result);
	if (rc == 0) {
		if (t->head_sent) {
			resp->outcome = M0_STREAMED;
		} else {
			if (!t->committed)
				resp->body.start = resp->body.end = (uint32_t)resp->len;
			resp->content_length = (int64_t)(resp->body.end - resp->body.start);
			if (resp->file_fd >= 0)
				resp->content_length = resp->file_length;
			resp->outcome = M0_COMPLETE;
		}
	}
out:
	/* Stale from here: a start_response, write or wsgi.input the app kept
	 * refuses to act. */
	t->generation++;
	t->resp = NULL;
}
