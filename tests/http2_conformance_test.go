//go:build linux

package tests

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

// TestHTTP2Conformance runs h2spec, plain and strict, against the real
// binary: over h2c with --http 2 (with auto a cleartext connection that
// does not open with the preface is HTTP/1.1's, which h2spec's test of
// a wrong preface takes for a failure), and over TLS with auto.
func TestHTTP2Conformance(t *testing.T) {
	h2spec := h2specPath(t)
	for _, tc := range []struct {
		name string
		tls  bool
		args []string
	}{
		{"h2c-native", false, []string{"--http", "2", "--native", "hello"}},
		{"tls-native", true, []string{"--native", "echo"}},
		{"h2c-wsgi", false, []string{"--http", "2", "h2_app:application"}},
		{"tls-asgi", true, []string{"h2_app:app"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH2(t, wsgiVariant(), tc.tls, tc.args...)
			host, port, _ := net.SplitHostPort(s.addr)
			for _, strict := range []bool{false, true} {
				args := []string{"-h", host, "-p", port, "-o", "10"}
				if tc.tls {
					args = append(args, "-t", "-k")
				}
				if strict {
					args = append(args, "-S")
				}
				out, err := exec.Command(h2spec, args...).CombinedOutput()
				text := string(out)
				if err != nil || !strings.Contains(text, " 0 failed") {
					t.Fatalf("h2spec %q: %v\n%s", args, err, text)
				}
				t.Logf("h2spec %s: %s", strings.Join(args[4:], " "), lastLine(text))
			}
			checkNoTraceback(t, s.server)
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// h2specPath finds h2spec where make test-tools installs it.
func h2specPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("h2spec"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := strings.TrimSpace(string(out)) + "/bin/h2spec"
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	t.Fatal("h2spec is missing: make test-tools installs it")
	return ""
}
