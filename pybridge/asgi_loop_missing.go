package pybridge

import (
	"fmt"
	"strings"
)

// MissingLoopError is StartASGI's failure when the event loop asked for
// (LoopUvloop) is not installed where the app imports from; an import of
// it that fails otherwise is the traceback.
type MissingLoopError struct {
	Module string
}

func (e *MissingLoopError) Error() string {
	return fmt.Sprintf("pybridge: the event loop's package %s is not installed", e.Module)
}

// startError is the executor's failure to start from the Python text of
// it: a uvloop asked for and not found is a MissingLoopError (the
// traceback's last line, as asgi_executor.py's _new_loop re-raises it).
func startError(loop Loop, text string) error {
	if loop == LoopUvloop && strings.HasSuffix(strings.TrimSpace(text), "ModuleNotFoundError: No module named 'uvloop'") {
		return &MissingLoopError{Module: "uvloop"}
	}
	return fmt.Errorf("pybridge: starting the ASGI executor:\n%s", text)
}
