package pybridge

/*
#include "shim.h"
char *m0_register_stack_dump(int signum, int fd);
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
)

// DumpStacksOn has Python write every thread's stack to fd whenever the
// process gets sig (faulthandler.register, all threads): the handler is
// faulthandler's C one and needs no GIL, so it shows a thread stuck in
// the app even while that thread holds the GIL. sig must be one the Go
// side does not use (package os/signal must not be notified of it).
func (ip *Interpreter) DumpStacksOn(sig syscall.Signal, fd int) error {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return errors.New("pybridge: interpreter closed")
	}
	if err := C.m0_register_stack_dump(C.int(sig), C.int(fd)); err != nil {
		return fmt.Errorf("pybridge: faulthandler.register(%v): %s", sig, takeText(err))
	}
	return nil
}
