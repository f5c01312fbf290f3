/*
 * Python's stacks on demand: faulthandler's signal handler, which writes
 * every thread's traceback without the GIL, so that a request stuck in
 * the app (a loop in Python, or a C call holding the GIL) can be shown.
 */
#include "shim.h"

#include <stdlib.h>

/* m0_register_stack_dump has faulthandler write all threads' stacks to
 * fd on signum. NULL, or the error as malloc'd text. */
char *m0_register_stack_dump(int signum, int fd)
{
	PyGILState_STATE g = PyGILState_Ensure();
	char *err = NULL;
	PyObject *module = PyImport_ImportModule("faulthandler");
	PyObject *reg = module ? PyObject_GetAttrString(module, "register") : NULL;
	PyObject *args = reg ? Py_BuildValue("(i)", signum) : NULL;
	PyObject *kwargs = args ? Py_BuildValue("{s:i,s:O,s:O}", "file", fd, "all_threads", Py_True,
	                                        "chain", Py_False)
	                        : NULL;
	PyObject *r = kwargs ? PyObject_Call(reg, args, kwargs) : NULL;
	if (r == NULL)
		err = m0_format_exception();
	Py_XDECREF(r);
	Py_XDECREF(kwargs);
	Py_XDECREF(args);
	Py_XDECREF(reg);
	Py_XDECREF(module);
	PyGILState_Release(g);
	return err;
}
