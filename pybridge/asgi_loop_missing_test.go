package pybridge

import (
	"errors"
	"testing"
)

// TestStartErrorMissingLoop: a uvloop asked for and not installed is a
// MissingLoopError; any other failure, or uvloop's own import error, is
// the traceback.
func TestStartErrorMissingLoop(t *testing.T) {
	missing := "Traceback (most recent call last):\n  File \"x\", line 1\nModuleNotFoundError: No module named 'uvloop'\n"
	var m *MissingLoopError
	if err := startError(LoopUvloop, missing); !errors.As(err, &m) || m.Module != "uvloop" {
		t.Errorf("uvloop missing: %v", err)
	}
	for _, tc := range []struct {
		loop Loop
		text string
	}{
		{LoopAuto, missing},
		{LoopUvloop, "ImportError: libuv.so: cannot open shared object file"},
		{LoopUvloop, "ModuleNotFoundError: No module named 'uvloop.loop'"},
	} {
		if err := startError(tc.loop, tc.text); errors.As(err, &m) {
			t.Errorf("%v %q: %v", tc.loop, tc.text, err)
		}
	}
}
