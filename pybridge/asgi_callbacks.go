package pybridge

/*
#include "asgi.h"
*/
import "C"

import (
	"runtime/debug"
	"unsafe"
)

// Calls from the ASGI executor's C side, made on its thread with the GIL
// held: none blocks. Each stops a panic at its own frame (catch): one
// unwinding through the C and Python frames below would leave the GIL
// held and the interpreter's frames half run.

//export m0goASGIWake
func m0goASGIWake(executor C.int, last C.int) (stop C.int) {
	ex := asgiExecutors[executor]
	if ex == nil {
		return 1
	}
	defer ex.catch()
	if ex.wake(last != 0) || ex.panicked != nil {
		// A callback panicked: the event loop stops, and run raises the
		// panic once m0_asgi_run has returned.
		return 1
	}
	return 0
}

//export m0goASGIStarted
func m0goASGIStarted(executor C.int, err *C.char, loop *C.char) {
	ex := asgiExecutors[executor]
	defer ex.catch()
	ex.startedFrom(err, loop)
}

//export m0goASGIComplete
func m0goASGIComplete(slot C.int) {
	s := asgiSlots[slot]
	defer s.ex.catch()
	s.handBack()
}

//export m0goASGIRead
func m0goASGIRead(slot C.int) {
	s := asgiSlots[slot]
	defer s.ex.catch()
	s.read()
}

//export m0goASGIWrite
func m0goASGIWrite(slot C.int, head C.int, p *C.char, n C.size_t, trailers *C.m0_response) (done C.int) {
	s := asgiSlots[slot]
	defer s.ex.catch()
	w := asgiWrite{head: head != 0, p: unsafe.Pointer(p), n: int(n)}
	if trailers != nil {
		w.trailers = &Response{c: trailers}
	}
	return cbool(s.write(w))
}

//export m0goASGIFree
func m0goASGIFree(slot C.int) {
	s := asgiSlots[slot]
	defer s.ex.catch()
	s.free()
}

// catch is deferred by every callback: it keeps the first panic, logs its
// stack (raise panics again with the value alone) and has the executor
// stop, and the callback returns as if it had failed. The panic comes
// back on the Go side of the executor's outermost cgo call, with the GIL
// released: Step's, or run's once the event loop has stopped. A panic is
// a bug: the process is expected to end with it.
func (ex *ASGIExecutor) catch() {
	p := recover()
	if p == nil {
		return
	}
	if ex.panicked == nil {
		ex.panicked = p
		logLine("m0serve: panic in an ASGI callback (raised again once out of Python): %v\n%s", p, debug.Stack())
	}
	ex.signal()
}

// raise panics again with what a callback panicked with. Called with
// the GIL released, with no C frame below.
func (ex *ASGIExecutor) raise() {
	if p := ex.panicked; p != nil {
		ex.panicked = nil
		panic(p)
	}
}
