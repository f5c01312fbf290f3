package pybridge

/*
#include "asgi.h"
*/
import "C"

import "unsafe"

// Calls from the ASGI executor's C side, made on its thread with the GIL
// held: none blocks.

//export m0goASGIWake
func m0goASGIWake(executor C.int) C.int {
	ex := asgiExecutors[executor]
	if ex == nil || ex.wake() {
		return 1
	}
	return 0
}

//export m0goASGIStarted
func m0goASGIStarted(executor C.int, err *C.char, loop *C.char) {
	asgiExecutors[executor].startedFrom(err, loop)
}

//export m0goASGIComplete
func m0goASGIComplete(slot C.int) {
	asgiSlots[slot].complete()
}

//export m0goASGIRead
func m0goASGIRead(slot C.int) {
	asgiSlots[slot].read()
}

//export m0goASGIWrite
func m0goASGIWrite(slot C.int, head C.int, p *C.char, n C.size_t, trailers *C.m0_response) {
	w := asgiWrite{head: head != 0, p: unsafe.Pointer(p), n: int(n)}
	if trailers != nil {
		w.trailers = &Response{c: trailers}
	}
	asgiSlots[slot].write(w)
}

//export m0goASGIRelease
func m0goASGIRelease(slot C.int) {
	asgiSlots[slot].release()
}
