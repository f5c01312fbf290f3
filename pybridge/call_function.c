/*
 * m0_call_function runs Python source as a module and calls one of its
 * functions with a text argument: for a step of the server's that is
 * easier said in Python (logconfig.py).
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

/* The function's result as malloc'd text (NULL for None), or the text of
 * the exception it raised. Takes the GIL. */
char *m0_call_function(const char *source, const char *module, const char *function,
                       const char *arg)
{
	PyGILState_STATE g = PyGILState_Ensure();
	char *text = NULL;
	PyObject *code = Py_CompileString(source, module, Py_file_input);
	PyObject *mod = code != NULL ? PyImport_ExecCodeModule(module, code) : NULL;
	PyObject *result = mod != NULL ? PyObject_CallMethod(mod, function, "s", arg) : NULL;
	if (result == NULL) {
		text = m0_format_exception();
	} else if (result != Py_None) {
		const char *s = PyUnicode_Check(result) ? PyUnicode_AsUTF8(result) : NULL;
		if (s != NULL) {
			text = strdup(s);
		} else {
			PyErr_Clear();
			text = strdup("the function returned no text");
		}
	}
	Py_XDECREF(result);
	Py_XDECREF(mod);
	Py_XDECREF(code);
	PyGILState_Release(g);
	return text;
}
