//go:build linux

package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// asgiServer is a running ASGI app with the directory its side effects
// go to ($E2E_DIR).
type asgiServer struct {
	*server
	dir string
}

// startASGI serves target from tests/apps on variant v; the app writes
// its side effects under a fresh directory.
func startASGI(t *testing.T, v variant, target string, args ...string) *asgiServer {
	t.Helper()
	dir := t.TempDir()
	v.env = append(append([]string{}, v.env...), "E2E_DIR="+dir)
	s := start(t, v, append(append([]string{"--app-dir", appsDir(t)}, args...), target)...)
	return &asgiServer{server: s, dir: dir}
}

// waitFile waits for the app to write want into name under the server's
// directory. The limit only bounds a failing test: the file is expected
// at once.
func (s *asgiServer) waitFile(t *testing.T, name, want string) {
	t.Helper()
	path := filepath.Join(s.dir, name)
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && string(data) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q (%v), want %q\n%s", name, data, err, want, s.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkNoTraceback stops the server and fails the test unless its log
// shows exactly the expected Python errors, one traceback each.
func checkNoTraceback(t *testing.T, s *server, expected ...string) {
	t.Helper()
	s.stop()
	logs := s.logs.String()
	for _, e := range expected {
		if !strings.Contains(logs, e) {
			t.Fatalf("server log lacks %q:\n%s", e, logs)
		}
	}
	if n := strings.Count(logs, "Traceback"); n != len(expected) {
		t.Fatalf("server log shows %d tracebacks, want %d:\n%s", n, len(expected), logs)
	}
}

// get is a GET with a fresh client that fails the test on a transport
// error and returns the response with its body read.
func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	return httpGet(t, &http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirects}, url)
}
