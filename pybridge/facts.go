package pybridge

/*
#include <stdlib.h>
char *m0_interpreter_facts(char **error);
*/
import "C"

import "errors"

// Facts is what the running interpreter says of itself, as a JSON
// object: version, implementation, free_threaded_build, gil_enabled,
// executable, prefix, base_prefix, machine, path (m0serve --doctor).
func (ip *Interpreter) Facts() (string, error) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return "", errors.New("pybridge: interpreter closed")
	}
	var cerr *C.char
	out := C.m0_interpreter_facts(&cerr)
	if out == nil {
		return "", errors.New("pybridge: " + takeText(cerr))
	}
	return takeText(out), nil
}
