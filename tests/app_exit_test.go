//go:build linux

package tests

import (
	"net/http"
	"strings"
	"testing"
)

// TestAppExit: sys.exit() and KeyboardInterrupt in a request are that
// request's failure (uvicorn's rule): a 500, the traceback in the log,
// and the server goes on serving and stops on SIGTERM. PyErr_PrintEx
// used to act on the SystemExit, finalising Python under the handler
// thread: every later request hung and SIGTERM did not end the process.
func TestAppExit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target string
		args   []string
	}{
		{"wsgi", "exit_app:app", nil},
		{"wsgi-inline", "exit_app:app", []string{"--threads", "0"}},
		{"asgi", "exit_app:asgi", []string{"--interface", "asgi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startWSGI(t, tc.target, tc.args...)
			for _, path := range []string{"/exit", "/interrupt", "/exit", "/ok"} {
				resp, body := get(t, s.url(path))
				want := http.StatusInternalServerError
				if path == "/ok" {
					want = http.StatusOK
				}
				if resp.StatusCode != want {
					t.Fatalf("GET %s: %d %q, want %d\n%s", path, resp.StatusCode, body, want, s.logs)
				}
			}
			logs := s.logs.String()
			for _, want := range []string{"GET /exit: the", "SystemExit: 1", "GET /interrupt: the", "KeyboardInterrupt"} {
				if !strings.Contains(logs, want) {
					t.Errorf("log lacks %q:\n%s", want, logs)
				}
			}
			checkNoTraceback(t, s, "SystemExit", "KeyboardInterrupt", "SystemExit")
		})
	}
}
