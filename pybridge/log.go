package pybridge

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// logf is the server's logger (SetLog); nil writes lines to stderr bare.
var logf atomic.Pointer[func(format string, args ...any)]

// SetLog routes the bridge's own lines (the one naming a failed request
// above its traceback, the ASGI lifespan notices) through the server's
// logger, so that every line of the server's log has one format. The
// traceback itself follows as Python prints it, to sys.stderr.
func SetLog(f func(format string, args ...any)) {
	logf.Store(&f)
}

// SetTracebacksInline makes a logged exception's traceback part of the
// line naming it (for a log read by a machine, one record per line)
// rather than printed under it to sys.stderr. Call it before Start.
func SetTracebacksInline(inline bool) {
	C.m0_log_inline_tracebacks = 0
	if inline {
		C.m0_log_inline_tracebacks = 1
	}
}

// m0goLog is m0_log's way out, called with the GIL held: the logger
// writes at once and takes no lock Python could be holding. An error
// line gets the level word the server's logger reads after its
// "m0serve: " prefix.
//
//export m0goLog
func m0goLog(line *C.char, n C.int, isError C.int) {
	text := C.GoStringN(line, n)
	if f := logf.Load(); f != nil {
		if rest, ok := strings.CutPrefix(text, "m0serve: "); ok && isError != 0 {
			text = "m0serve: error: " + rest
		}
		(*f)("%s", text)
		return
	}
	fmt.Fprintln(os.Stderr, text)
}
