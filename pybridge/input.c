/*
 * wsgi.input: the request body as a blocking file-like object. Bytes come
 * from the Go BodyReader through m0goBodyRead with the GIL released, so
 * other handler threads run Python while this one waits for the client.
 * It never reads past the body: the Go reader ends at the body's end, and
 * a Content-Length caps every pull. Where a body may end with trailers
 * (HTTP/2), environ's m0serve.trailers list is filled with them once the
 * body's end is read (take_trailers).
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

struct m0_input {
	PyObject_HEAD
	m0_thread *thread;
	uint64_t generation; /* the request it belongs to */
	int64_t remaining;   /* body bytes not yet pulled; -1: unknown (chunked) */
	int eof;
	int busy; /* a pull is in flight with the GIL released */
	char *buf; /* read-ahead for readline */
	size_t pos, len, cap;
	PyObject *trailers; /* environ's m0serve.trailers, until filled; or NULL */
};

static int take_trailers(m0_input *in);

#define CHUNK 8192

static int check_live(m0_input *in)
{
	if (in->thread == NULL || in->generation != in->thread->generation) {
		PyErr_SetString(PyExc_ValueError,
		                "wsgi.input used after its request ended");
		return -1;
	}
	if (in->busy) {
		PyErr_SetString(PyExc_RuntimeError,
		                "wsgi.input read from two threads at once");
		return -1;
	}
	return 0;
}

/* pull asks the Go reader for at most n bytes into dst, once: it returns
 * what is there (blocking only while nothing is). 0 is the end. */
static Py_ssize_t pull(m0_input *in, char *dst, size_t n)
{
	if (in->eof || n == 0)
		return 0;
	if (in->remaining >= 0 && (int64_t)n > in->remaining)
		n = (size_t)in->remaining;
	if (n == 0) {
		in->eof = 1;
		return 0;
	}
	long got;
	int id = in->thread->id;
	in->busy = 1;
	Py_BEGIN_ALLOW_THREADS
	got = m0goBodyRead(id, dst, n);
	Py_END_ALLOW_THREADS
	in->busy = 0;
	if (got < 0) {
		in->thread->body_failed = 1;
		PyErr_SetString(PyExc_OSError,
		                "request body: the client went away or sent a bad body");
		return -1;
	}
	if (got == 0) {
		if (in->remaining > 0) {
			in->thread->body_failed = 1;
			PyErr_SetString(PyExc_OSError,
			                "request body ended before its Content-Length");
			return -1;
		}
		in->eof = 1;
		return take_trailers(in);
	}
	if (in->remaining >= 0)
		in->remaining -= got;
	if (in->remaining == 0 && take_trailers(in) < 0)
		return -1;
	return got;
}

/* take_trailers fills the request's m0serve.trailers list, once, when the
 * body has been read to its end: a (name, value) str pair per trailer
 * field, names in lower case, in the order received. The Go side waits
 * (GIL released) for the end of the stream, which, for a body of known
 * length, may come after its last byte; it writes the fields into the
 * thread's scratch as "name\0value\0" (neither holds a NUL: the codec
 * refused such fields) and says how many bytes they need. A client gone
 * before the end leaves the list empty; the body's own error, if any,
 * shows on the read. */
static int take_trailers(m0_input *in)
{
	PyObject *list = in->trailers;
	if (list == NULL)
		return 0;
	in->trailers = NULL;
	m0_thread *t = in->thread;
	long need;
	in->busy = 1;
	Py_BEGIN_ALLOW_THREADS
	need = m0goBodyTrailers(t->id, t->scratch, t->scratch_cap);
	Py_END_ALLOW_THREADS
	in->busy = 0;
	if (need > (long)t->scratch_cap) {
		char *s = realloc(t->scratch, (size_t)need);
		if (s == NULL) {
			Py_DECREF(list);
			PyErr_NoMemory();
			return -1;
		}
		t->scratch = s;
		t->scratch_cap = (size_t)need;
		/* The body has ended: this call does not wait. */
		need = m0goBodyTrailers(t->id, t->scratch, t->scratch_cap);
	}
	int rc = 0;
	for (long at = 0; rc == 0 && need > 0 && at < need;) {
		const char *name = t->scratch + at;
		size_t nn = strnlen(name, (size_t)(need - at));
		const char *value = name + nn + 1;
		size_t vn = strnlen(value, (size_t)(need - at) - nn - 1);
		at += (long)(nn + vn + 2);
		PyObject *pair = Py_BuildValue("(NN)", PyUnicode_DecodeLatin1(name, (Py_ssize_t)nn, NULL),
		                               PyUnicode_DecodeLatin1(value, (Py_ssize_t)vn, NULL));
		rc = pair == NULL ? -1 : PyList_Append(list, pair);
		Py_XDECREF(pair);
	}
	Py_DECREF(list);
	return rc;
}

/* m0_input_trailers puts an empty m0serve.trailers list in env, for
 * take_trailers to fill at the end of the body. */
int m0_input_trailers(m0_input *in, PyObject *env)
{
	static PyObject *key;
	if (key == NULL && (key = PyUnicode_InternFromString("m0serve.trailers")) == NULL)
		return -1;
	PyObject *list = PyList_New(0);
	if (list == NULL || PyDict_SetItem(env, key, list) < 0) {
		Py_XDECREF(list);
		return -1;
	}
	Py_XSETREF(in->trailers, list);
	return 0;
}

/* fill pulls once more into the read-ahead buffer. */
static Py_ssize_t fill(m0_input *in)
{
	if (in->pos > 0 && in->pos == in->len)
		in->pos = in->len = 0;
	if (in->pos > 0 && in->cap - in->len < CHUNK) {
		memmove(in->buf, in->buf + in->pos, in->len - in->pos);
		in->len -= in->pos;
		in->pos = 0;
	}
	if (in->cap - in->len < CHUNK) {
		size_t cap = in->cap ? in->cap * 2 : CHUNK;
		char *b = PyMem_Realloc(in->buf, cap);
		if (b == NULL) {
			PyErr_NoMemory();
			return -1;
		}
		in->buf = b;
		in->cap = cap;
	}
	Py_ssize_t got = pull(in, in->buf + in->len, in->cap - in->len);
	if (got > 0)
		in->len += (size_t)got;
	return got;
}

static PyObject *take_buffered(m0_input *in, size_t n)
{
	PyObject *b = PyBytes_FromStringAndSize(in->buf + in->pos, (Py_ssize_t)n);
	if (b != NULL)
		in->pos += n;
	return b;
}

static int size_arg(PyObject *arg, Py_ssize_t *n)
{
	*n = -1;
	if (arg == NULL || arg == Py_None)
		return 0;
	*n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
	return (*n == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* read_some returns up to n bytes (n < 0: all that is left), short only at
 * the end of the body. Bytes past the read-ahead go straight from the Go
 * reader into the bytes object, which starts small and doubles as bytes
 * arrive: a size from the app (or a Content-Length from the client) is a
 * bound, not an allocation. */
static PyObject *read_some(m0_input *in, Py_ssize_t n)
{
	enum { FIRST = 64 << 10 };
	size_t have = in->len - in->pos;
	size_t want = n >= 0 ? (size_t)n : SIZE_MAX;
	if (in->remaining >= 0 && want > have + (size_t)in->remaining)
		want = have + (size_t)in->remaining;
	if (want <= have)
		return take_buffered(in, want);
	size_t cap = want - have > FIRST ? have + FIRST : want;
	PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)cap);
	if (b == NULL)
		return NULL;
	memcpy(PyBytes_AS_STRING(b), in->buf + in->pos, have);
	in->pos = in->len = 0;
	size_t got = have;
	for (;;) {
		if (got == cap) {
			if (cap == want || in->eof || in->remaining == 0)
				break;
			cap = want - cap > cap ? cap * 2 : want;
			if (_PyBytes_Resize(&b, (Py_ssize_t)cap) < 0)
				return NULL;
		}
		Py_ssize_t r = pull(in, PyBytes_AS_STRING(b) + got, cap - got);
		if (r < 0) {
			Py_DECREF(b);
			return NULL;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got != cap && _PyBytes_Resize(&b, (Py_ssize_t)got) < 0)
		return NULL;
	return b;
}

static PyObject *input_read(m0_input *in, PyObject *const *args, Py_ssize_t nargs)
{
	Py_ssize_t n;
	if (check_live(in) < 0)
		return NULL;
	if (nargs > 1) {
		PyErr_SetString(PyExc_TypeError, "read() takes at most 1 argument");
		return NULL;
	}
	if (size_arg(nargs ? args[0] : NULL, &n) < 0)
		return NULL;
	return read_some(in, n);
}

static PyObject *read_line(m0_input *in, Py_ssize_t limit)
{
	size_t scanned = 0;
	for (;;) {
		size_t have = in->len - in->pos;
		size_t upto = (limit >= 0 && (size_t)limit < have) ? (size_t)limit : have;
		char *nl = upto > scanned
		               ? memchr(in->buf + in->pos + scanned, '\n', upto - scanned)
		               : NULL;
		if (nl != NULL)
			return take_buffered(in, (size_t)(nl - (in->buf + in->pos)) + 1);
		if (limit >= 0 && have >= (size_t)limit)
			return take_buffered(in, (size_t)limit);
		scanned = upto;
		Py_ssize_t r = fill(in);
		if (r < 0)
			return NULL;
		if (r == 0)
			return take_buffered(in, in->len - in->pos);
	}
}

static PyObject *input_readline(m0_input *in, PyObject *const *args,
                                Py_ssize_t nargs)
{
	Py_ssize_t limit;
	if (check_live(in) < 0)
		return NULL;
	if (nargs > 1) {
		PyErr_SetString(PyExc_TypeError, "readline() takes at most 1 argument");
		return NULL;
	}
	if (size_arg(nargs ? args[0] : NULL, &limit) < 0)
		return NULL;
	return read_line(in, limit);
}

static PyObject *input_readlines(m0_input *in, PyObject *const *args,
                                 Py_ssize_t nargs)
{
	Py_ssize_t hint;
	if (check_live(in) < 0)
		return NULL;
	if (nargs > 1) {
		PyErr_SetString(PyExc_TypeError, "readlines() takes at most 1 argument");
		return NULL;
	}
	if (size_arg(nargs ? args[0] : NULL, &hint) < 0)
		return NULL;
	PyObject *lines = PyList_New(0);
	Py_ssize_t total = 0;
	while (lines != NULL) {
		PyObject *line = read_line(in, -1);
		if (line == NULL || PyBytes_GET_SIZE(line) == 0) {
			if (line == NULL)
				Py_CLEAR(lines);
			Py_XDECREF(line);
			break;
		}
		total += PyBytes_GET_SIZE(line);
		int rc = PyList_Append(lines, line);
		Py_DECREF(line);
		if (rc < 0)
			Py_CLEAR(lines);
		else if (hint > 0 && total >= hint)
			break;
	}
	return lines;
}

static PyObject *input_iternext(m0_input *in)
{
	if (check_live(in) < 0)
		return NULL;
	PyObject *line = read_line(in, -1);
	if (line != NULL && PyBytes_GET_SIZE(line) == 0) {
		Py_DECREF(line);
		return NULL; /* StopIteration */
	}
	return line;
}

static void input_dealloc(m0_input *in)
{
	Py_CLEAR(in->trailers);
	PyMem_Free(in->buf);
	Py_TYPE(in)->tp_free((PyObject *)in);
}

static PyMethodDef input_methods[] = {
    {"read", (PyCFunction)(void (*)(void))input_read, METH_FASTCALL,
     "read(size=-1): up to size bytes, fewer only at the end of the body"},
    {"readline", (PyCFunction)(void (*)(void))input_readline, METH_FASTCALL,
     "readline(limit=-1): one line, its newline kept"},
    {"readlines", (PyCFunction)(void (*)(void))input_readlines, METH_FASTCALL,
     "readlines(hint=-1): the remaining lines"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject m0_InputType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "m0serve.Input",
    .tp_basicsize = sizeof(m0_input),
    .tp_dealloc = (destructor)input_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "wsgi.input: the request body, read as it arrives",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)input_iternext,
    .tp_methods = input_methods,
};

int m0_input_ready(void)
{
	return PyType_Ready(&m0_InputType);
}

m0_input *m0_input_new(m0_thread *t)
{
	m0_input *in = PyObject_New(m0_input, &m0_InputType);
	if (in == NULL)
		return NULL;
	in->thread = t;
	in->generation = 0;
	in->remaining = 0;
	in->eof = 1;
	in->busy = 0;
	in->buf = NULL;
	in->pos = in->len = in->cap = 0;
	in->trailers = NULL;
	return in;
}

/* m0_input_reuse readies t->input for the request: the same object when
 * the last app kept no reference to it, a new one when it did (the kept
 * one then refuses to read, its generation being stale). */
int m0_input_reuse(m0_thread *t, const m0_request *req)
{
	m0_input *in = t->input;
	if (Py_REFCNT(in) != 1) {
		m0_input *fresh = m0_input_new(t);
		if (fresh == NULL)
			return -1;
		Py_DECREF(in);
		t->input = in = fresh;
	}
	in->generation = t->generation;
	in->remaining = req->chunked ? -1 : (req->content_length > 0 ? req->content_length : 0);
	in->eof = in->remaining == 0;
	in->pos = in->len = 0;
	Py_CLEAR(in->trailers);
	return 0;
}

void m0_input_detach(m0_input *in)
{
	in->thread = NULL;
}
