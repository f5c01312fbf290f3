package pybridge

/*
#include "shim.h"
#include <stdlib.h>

char *m0_provide_publisher(const char *source, int64_t *counter);
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Publisher is what the interpreter's m0pub needs of the server: its
// source, for an interpreter with no m0serve package on its path, and the
// event-id counter's word as this process maps it (nil: no --realtime;
// m0pub then finds no bus and publish returns 0).
type Publisher struct {
	Source  string
	Counter *int64
}

// ProvidePublisher makes m0serve.m0pub importable (the installed module
// where there is one) and numbers its events from p.Counter. Call it
// before the app is imported.
func (ip *Interpreter) ProvidePublisher(p Publisher) error {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return errors.New("pybridge: interpreter closed")
	}
	source := C.CString(p.Source)
	defer C.free(unsafe.Pointer(source))
	if msg := C.m0_provide_publisher(source, (*C.int64_t)(unsafe.Pointer(p.Counter))); msg != nil {
		return errors.New("pybridge: providing m0serve.m0pub: " + takeText(msg))
	}
	return nil
}
