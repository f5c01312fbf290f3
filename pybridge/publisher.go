package pybridge

/*
#include "shim.h"
#include <stdlib.h>

char *m0_provide_publisher(const char *source, int64_t *counter);
char *m0_provide_module(const char *name, const char *source);
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

// ProvideModule makes m0serve.<name> importable from source where no
// installed m0serve package has it (bin/m0serve): a module of the
// wheel's that needs nothing of the server (m0serve.grant). Call it
// before the app is imported.
func (ip *Interpreter) ProvideModule(name, source string) error {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return errors.New("pybridge: interpreter closed")
	}
	cname, csource := C.CString(name), C.CString(source)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(csource))
	if msg := C.m0_provide_module(cname, csource); msg != nil {
		return errors.New("pybridge: providing m0serve." + name + ": " + takeText(msg))
	}
	return nil
}
