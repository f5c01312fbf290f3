/*
 * wsgi.file_wrapper: an iterable over filelike.read(blksize) that closes
 * the file; over a regular file the response is the file itself, sent by
 * the Go side without its bytes passing through Python.
 */
#include "shim.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* file_response answers a wsgi.file_wrapper over a regular file with the
 * file itself: the Go side sends it (sendfile) without its bytes passing
 * through Python. 0 done, 1 not a plain file (iterate it instead), -1
 * exception. */
int m0_file_response(m0_thread *t, PyObject *result)
{
	file_wrapper *w = (file_wrapper *)result;
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
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return PyErr_SetFromErrno(PyExc_OSError), -1;
	m0_response *resp = t->resp;
	t->committed = 1;
	resp->body.start = resp->body.end = (uint32_t)resp->len;
	resp->file_fd = own;
	resp->file_offset = offset;
	resp->file_length = st.st_size > offset ? st.st_size - offset : 0;
	return 0;
}

int m0_file_wrapper_ready(void)
{
	return PyType_Ready(&m0_FileWrapperType);
}
