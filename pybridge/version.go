package pybridge

/*
#include "shim.h"

// m0_gil_enabled asks the running interpreter whether its GIL is enabled
// (sys._is_gil_enabled, CPython 3.13 and newer; before it always was).
// The caller's thread holds no thread state; -1 when the question failed.
static int m0_gil_enabled(void) {
	PyGILState_STATE gil = PyGILState_Ensure();
	int enabled = 1;
	PyObject *sys = PyImport_ImportModule("sys");
	if (sys == NULL) {
		enabled = -1;
	} else if (PyObject_HasAttrString(sys, "_is_gil_enabled")) {
		PyObject *answer = PyObject_CallMethod(sys, "_is_gil_enabled", NULL);
		enabled = answer == NULL ? -1 : PyObject_IsTrue(answer);
		Py_XDECREF(answer);
	}
	Py_XDECREF(sys);
	if (enabled < 0) {
		PyErr_Clear();
	}
	PyGILState_Release(gil);
	return enabled;
}
*/
import "C"

import "strings"

// LibraryVersion is the full version of the CPython library this process
// loaded, as "3.11.2". It comes from Py_GetVersion, which CPython allows
// before initialisation, so it costs no interpreter start. After a
// libpython upgrade without a rebuild it is newer than the headers the
// binary was built with (Version: their major.minor).
func LibraryVersion() string {
	version, _, _ := strings.Cut(C.GoString(C.Py_GetVersion()), " ")
	return version
}

// GILEnabled says whether the interpreter runs with its GIL. Hosted (the
// interpreter runs already, and the caller's thread holds none of its
// state), the interpreter answers: a free-threaded one re-enables its GIL
// for an extension that does not declare it safe without. Embedded, the
// interpreter has not started and the build answers: pybridge builds
// only against CPythons with a GIL (shim.h).
func GILEnabled() bool {
	if !Hosted() {
		return true
	}
	return C.m0_gil_enabled() != 0
}
