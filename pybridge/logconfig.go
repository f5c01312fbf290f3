package pybridge

/*
#include <stdlib.h>
char *m0_call_function(const char *source, const char *module, const char *function, const char *arg);
*/
import "C"

import (
	_ "embed"
	"errors"
	"strings"
	"unsafe"
)

//go:embed logconfig.py
var logConfigSource string

// ConfigureLogging configures Python's logging from the file at path
// before the app imports, as uvicorn's --log-config: a dictConfig in
// JSON or YAML, else a fileConfig. It returns a warning to log (the file
// configures uvicorn's own loggers, which are nothing here) or the
// error, in one line.
func (ip *Interpreter) ConfigureLogging(path string) (warning string, err error) {
	source, module, function, arg := C.CString(logConfigSource), C.CString("_m0serve_logconfig"), C.CString("configure"), C.CString(path)
	defer func() {
		for _, p := range []*C.char{source, module, function, arg} {
			C.free(unsafe.Pointer(p))
		}
	}()
	result := C.m0_call_function(source, module, function, arg)
	if result == nil {
		return "", nil
	}
	text := takeText(result)
	if w, ok := strings.CutPrefix(text, "warning: "); ok {
		return w, nil
	}
	return "", errors.New(text)
}
