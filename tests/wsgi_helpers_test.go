//go:build linux

package tests

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// systemPython is Debian's interpreter: the one the binary embeds, whose
// dist-packages hold Flask, Django and gunicorn (a pyenv python3 earlier on
// PATH has none of them).
const systemPython = "/usr/bin/python3"

// appsDir is tests/apps, the Python apps the WSGI tests serve.
func appsDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("apps")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// wsgiVariant is the default backend (auto) with extra environment.
func wsgiVariant(env ...string) variant {
	return variant{name: "auto", env: env}
}

// wsgiInlineByDefault reports whether a WSGI server started without
// --wsgi-inline may run a request on the I/O thread, gathering its body
// (M0_TEST_WSGI_INLINE=off: never).
func wsgiInlineByDefault() bool { return os.Getenv("M0_TEST_WSGI_INLINE") != "off" }

// startWSGI serves target from tests/apps on the default backend.
func startWSGI(t testing.TB, target string, args ...string) *server {
	t.Helper()
	return start(t, wsgiVariant(), append(append([]string{"--app-dir", appsDir(t)}, args...), target)...)
}

// checkValidatorLog stops the server and fails the test when its log shows
// that wsgiref's validator objected to something (an AssertionError, or a
// WSGIWarning made an error by tests/apps/validated.py).
func checkValidatorLog(t *testing.T, s *server) {
	t.Helper()
	s.stop()
	logs := s.logs.String()
	for _, bad := range []string{"AssertionError", "WSGIWarning", "Traceback"} {
		if strings.Contains(logs, bad) {
			t.Fatalf("server log shows %s:\n%s", bad, logs)
		}
	}
}

// requireCommand fails (never skips) when a program the test needs is
// missing: `make test` installs it.
func requireCommand(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("%s is missing (make test installs it): %v", path, err)
	}
}

// rawExchange sends raw bytes on a fresh connection and reads until the
// server closes it or limit passes; it returns everything read.
func rawExchange(t *testing.T, addr, request string, limit time.Duration) (string, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(limit))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c)
	return string(out), err
}

// readResponseTo reads one (the answer to method) response from br.
func readResponseTo(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(readBody(t, resp))
}

// httpGet is a GET with a client that does not follow redirects.
func httpGet(t *testing.T, client *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(readBody(t, resp))
}

// readBody reads and closes resp's body; a read error fails the test.
func readBody(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// processRSS is a process's resident set in bytes, from /proc.
func processRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			for _, c := range strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")) {
				kb = kb*10 + int64(c-'0')
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}
