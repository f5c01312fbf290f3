/*
 * The extension module m0serve._m0serve: one function, main(argv), which
 * runs m0serve's command line in this interpreter and returns its exit
 * status. The Python C API resolves from the host process (no libpython
 * is linked), so one build serves every interpreter of its minor version.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#include "_cgo_export.h"

#ifdef Py_GIL_DISABLED
#error "m0serve does not support the free-threaded CPython build (3.13t) yet"
#endif

/* fs_bytes is item as the file-system encoding's bytes (a new reference),
 * as os.fsencode would give: an argument is passed on byte for byte. */
static PyObject *fs_bytes(PyObject *item)
{
	PyObject *b = NULL;
	if (!PyUnicode_FSConverter(item, &b))
		return NULL;
	return b;
}

static PyObject *ext_main(PyObject *self, PyObject *arg)
{
	(void)self;
	PyObject *seq = PySequence_Fast(arg, "main() takes a list of arguments");
	if (seq == NULL)
		return NULL;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	PyObject **held = calloc((size_t)n + 2, sizeof *held);
	char **argv = calloc((size_t)n + 1, sizeof *argv);
	PyObject *result = NULL;
	if (held == NULL || argv == NULL) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		held[i] = fs_bytes(PySequence_Fast_GET_ITEM(seq, i));
		if (held[i] == NULL)
			goto out;
		argv[i] = PyBytes_AS_STRING(held[i]);
	}
	/* sys.executable: a master starts its workers with it (a venv's
	 * bin/python keeps the venv). */
	PyObject *executable = PySys_GetObject("executable"); /* borrowed */
	if (executable == NULL || executable == Py_None || PyUnicode_GetLength(executable) == 0) {
		PyErr_SetString(PyExc_RuntimeError, "m0serve: sys.executable is not set: cannot start workers");
		goto out;
	}
	held[n] = fs_bytes(executable);
	if (held[n] == NULL)
		goto out;
	/* sys.prefix: where a missing package must be installed (loaderror.go). */
	PyObject *prefix = PySys_GetObject("prefix"); /* borrowed */
	held[n + 1] = fs_bytes(prefix != NULL && prefix != Py_None ? prefix : executable);
	if (held[n + 1] == NULL)
		goto out;
	/* threading takes the thread that first imports it for the main
	 * thread: this one, before the server's threads run Python. */
	PyObject *threading = PyImport_ImportModule("threading");
	if (threading == NULL)
		goto out;
	Py_DECREF(threading);
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = m0extMain(argv, (int)n, PyBytes_AS_STRING(held[n]), PyBytes_AS_STRING(held[n + 1]));
	Py_END_ALLOW_THREADS
	result = PyLong_FromLong(rc);
out:
	if (held != NULL)
		for (Py_ssize_t i = 0; i <= n + 1; i++)
			Py_XDECREF(held[i]);
	free(held);
	free(argv);
	Py_DECREF(seq);
	return result;
}

static PyMethodDef methods[] = {
	{"main", ext_main, METH_O,
	 "main(argv) -> int: run m0serve with argv (without the program's name) in this "
	 "interpreter until the server stops; returns the exit status."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "m0serve._m0serve",
	"m0serve's server, built from its Go packages as an extension module.", -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__m0serve(void)
{
	return PyModule_Create(&module);
}
