package backendtest

import (
	"fmt"

	"github.com/m0serve/m0serve/loop"
)

func opName(op loop.Op) string {
	switch op {
	case loop.OpAccept:
		return "accept"
	case loop.OpRecv:
		return "recv"
	case loop.OpSend:
		return "send"
	case loop.OpClose:
		return "close"
	case loop.OpWake:
		return "wake"
	case loop.OpAcceptStopped:
		return "accept stopped"
	}
	return fmt.Sprintf("op(%d)", op)
}

func describe(c loop.Completion) string {
	return fmt.Sprintf("{%s slot %d gen %d res %d more %v provided %v}",
		opName(c.Op), c.Slot, c.Gen, c.Res, c.More, c.Provided)
}
