package pybridge

/*
#include "shim.h"
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
