/* What the interpreter says of itself, for m0serve --doctor. */
#include "shim.h"
#include <stdlib.h>
#include <string.h>

static const char facts_code[] =
	"import json, platform, sys, sysconfig\n"
	"_m0_facts = json.dumps({\n"
	"    'version': platform.python_version(),\n"
	"    'implementation': platform.python_implementation(),\n"
	"    'free_threaded_build': bool(sysconfig.get_config_var('Py_GIL_DISABLED')),\n"
	"    'gil_enabled': getattr(sys, '_is_gil_enabled', lambda: True)(),\n"
	"    'executable': sys.executable,\n"
	"    'prefix': sys.prefix,\n"
	"    'base_prefix': sys.base_prefix,\n"
	"    'machine': platform.machine(),\n"
	"    'path': sys.path,\n"
	"})\n";

/* m0_interpreter_facts returns a JSON object (malloc'd), or NULL with the
 * error text in *error (malloc'd). Any thread: it takes the GIL. */
char *m0_interpreter_facts(char **error)
{
	PyGILState_STATE g = PyGILState_Ensure();
	char *out = NULL;
	PyObject *globals = PyDict_New();
	if (globals != NULL && PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) == 0) {
		PyObject *r = PyRun_String(facts_code, Py_file_input, globals, globals);
		PyObject *text = r ? PyDict_GetItemString(globals, "_m0_facts") : NULL;
		const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
		if (utf8 != NULL)
			out = strdup(utf8);
		Py_XDECREF(r);
	}
	if (out == NULL) {
		*error = strdup("the interpreter's facts could not be read");
		PyErr_Clear();
	}
	Py_XDECREF(globals);
	PyGILState_Release(g);
	return out;
}
