/*
 * m0pub for the app: the module realtime's m0pub.py is, importable as
 * m0serve.m0pub where no m0serve package provides it (bin/m0serve), and
 * its numbering: _server_next_id adds to the event-id counter on the page
 * the server maps, atomically, without ctypes.
 */
#include "shim.h"
#include <stdio.h>

static int64_t *counter_word;

static PyObject *server_next_id(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLongLong(__atomic_add_fetch(counter_word, 1, __ATOMIC_SEQ_CST));
}

static PyMethodDef next_id_def = {"_server_next_id", server_next_id, METH_NOARGS,
                                  "The next event id from the counter all workers share."};

/* provide returns m0serve.<name>: the installed one, or one made from
 * source under a package of its own. New reference; NULL with an error. */
static PyObject *provide(const char *name, const char *source)
{
	char qualified[64], filename[64];
	snprintf(qualified, sizeof qualified, "m0serve.%s", name);
	snprintf(filename, sizeof filename, "m0serve/%s.py", name);
	PyObject *mod = PyImport_ImportModule(qualified);
	if (mod != NULL)
		return mod;
	PyErr_Clear();
	PyObject *pkg = PyImport_AddModule("m0serve"); /* borrowed */
	if (pkg == NULL)
		return NULL;
	if (!PyObject_HasAttrString(pkg, "__path__")) {
		PyObject *path = PyList_New(0);
		if (path == NULL || PyObject_SetAttrString(pkg, "__path__", path) < 0) {
			Py_XDECREF(path);
			return NULL;
		}
		Py_DECREF(path);
	}
	PyObject *code = Py_CompileString(source, filename, Py_file_input);
	if (code == NULL)
		return NULL;
	mod = PyImport_ExecCodeModule(qualified, code);
	Py_DECREF(code);
	if (mod != NULL && PyObject_SetAttrString(pkg, name, mod) < 0)
		Py_CLEAR(mod);
	return mod;
}

char *m0_provide_publisher(const char *source, int64_t *counter)
{
	PyGILState_STATE g = PyGILState_Ensure();
	char *err = NULL;
	PyObject *mod = provide("m0pub", source);
	if (mod != NULL && counter != NULL) {
		counter_word = counter;
		PyObject *f = PyCFunction_New(&next_id_def, NULL);
		if (f == NULL || PyObject_SetAttrString(mod, "_server_next_id", f) < 0)
			Py_CLEAR(mod);
		Py_XDECREF(f);
	}
	if (mod == NULL)
		err = m0_format_exception();
	Py_XDECREF(mod);
	PyGILState_Release(g);
	return err;
}

/* m0_provide_module makes m0serve.<name> importable: the installed module
 * where there is one, else source (bin/m0serve's embedded copy). */
char *m0_provide_module(const char *name, const char *source)
{
	PyGILState_STATE g = PyGILState_Ensure();
	char *err = NULL;
	PyObject *mod = provide(name, source);
	if (mod == NULL)
		err = m0_format_exception();
	Py_XDECREF(mod);
	PyGILState_Release(g);
	return err;
}
