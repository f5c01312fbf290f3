//go:build linux

package tests

import (
	"strings"
	"testing"
)

// TestLoopUvloopMissing: --loop uvloop where uvloop is not installed (the
// tests' venv has none) is one line naming the flag, the package and the
// environment, and exit 2, single and under --workers; no traceback.
func TestLoopUvloopMissing(t *testing.T) {
	venv := testVenv(t)
	for _, workers := range [][]string{nil, {"--workers", "2"}} {
		args := append([]string{"--port", "0", "--venv", venv, "--loop", "uvloop", "--app-dir", appsDir(t)}, workers...)
		code, out := runToExit(t, cleanEnv(), append(args, "http_asgi_app:app")...)
		want := "m0serve: --loop: uvloop: the package uvloop is not installed where the app imports from (the venv " + venv + "): install it there (pip install uvloop), or --loop auto\n"
		if code != 2 || !strings.Contains(out, want) || strings.Contains(out, "Traceback") {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", workers, code, want, out)
		}
	}
}
