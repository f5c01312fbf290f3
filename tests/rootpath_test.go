//go:build linux

package tests

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestRootPathAsUvicorn: with --root-path an ASGI app sees what uvicorn
// gives it (path and raw_path with the prefix in front, as ASGI 2.x
// says), so Starlette's and FastAPI's request.url, url_for, slash
// redirects and docs point under the prefix; behind a proxy that strips
// it and behind one that forwards it (the app's own root_path), each
// request's status, Location and body are uvicorn's, the address aside.
func TestRootPathAsUvicorn(t *testing.T) {
	for _, c := range []struct {
		target  string
		args    []string
		targets []string
	}{
		{"rootpath_app:fastapi", []string{"--root-path", "/api"},
			[]string{"/whoami", "/whoami/", "/go", "/docs", "/api/whoami", "/who%61mi", "/missing"}},
		{"rootpath_app:starlette", []string{"--root-path", "/api"},
			[]string{"/whoami", "/whoami/", "/go", "/api/whoami"}},
		{"rootpath_app:fastapi_prefixed", nil,
			[]string{"/api/whoami", "/api/whoami/", "/api/go", "/api/docs", "/whoami"}},
	} {
		t.Run(c.target+strings.Join(c.args, ""), func(t *testing.T) {
			m0 := startWSGI(t, c.target, withVenv(t, c.args...)...)
			uvicorn := startUvicornApp(t, c.target, c.args...)
			for _, target := range c.targets {
				want := comparable(t, "http://"+uvicorn, target)
				got := comparable(t, m0.url(""), target)
				if got != want {
					t.Errorf("%s %s %v: m0serve answers\n%s\nuvicorn\n%s", c.target, target, c.args, got, want)
				}
				if strings.Contains(got, "500") {
					t.Errorf("%s %s: %s", c.target, target, got)
				}
			}
		})
	}
}

// comparable is a response as text, its server's address replaced by
// ADDR: status, Location and body.
func comparable(t *testing.T, base, target string) string {
	t.Helper()
	resp, body := get(t, base+target)
	host := strings.TrimPrefix(base, "http://")
	text := fmt.Sprintf("%d Location=%q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	return strings.ReplaceAll(text, host, "ADDR")
}

// startUvicornApp runs tests/.venv's uvicorn with a tests/apps app on a
// socket the test bound and returns its address once it answers.
func startUvicornApp(t *testing.T, target string, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	file, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	argv := append([]string{"-m", "uvicorn", "--fd", "3", "--app-dir", appsDir(t), "--log-level", "warning"}, args...)
	cmd := exec.Command(venvPython(t), append(argv, target)...)
	cmd.ExtraFiles = []*os.File{file}
	cmd.Env = cleanEnv()
	logs := &logBuffer{}
	cmd.Stdout, cmd.Stderr = logWriter{logs}, logWriter{logs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("uvicorn's output:\n%s", logs)
		}
	})
	addr := ln.Addr().String()
	// The socket listens already: the request waits in its backlog
	// until uvicorn has started.
	client := &http.Client{Timeout: launchLimit}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("uvicorn did not answer: %v\n%s", err, logs)
	}
	resp.Body.Close()
	return addr
}
