//go:build linux

package tests

import (
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestSeccompFallback: where io_uring_setup is refused (as under Docker's
// default seccomp profile), --backend auto serves on epoll and says why.
func TestSeccompFallback(t *testing.T) {
	s := startCommand(t, variant{name: "auto", describes: "epoll"}, []string{noIOURing}, "--native", "hello")
	if !strings.Contains(s.logs.String(), "falling back to epoll") {
		t.Fatalf("no fallback line in the log:\n%s", s.logs)
	}
	resp, err := http.Get(s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "Hello, World!" {
		t.Fatalf("body %q", body)
	}
}

// TestConfigErrors: a configuration mistake is one line naming the flag
// and exit status 2.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  []string
		flag string
	}{
		{"bad port", []string{"--native", "hello", "--port", "x"}, nil, "port"},
		{"port range", []string{"--native", "hello", "--port", "70000"}, nil, "port"},
		{"bad env", []string{"--native", "hello"}, []string{"M0_PORT=abc"}, "port"},
		{"kqueue on linux", []string{"--native", "hello", "--backend", "kqueue"}, nil, "backend"},
		{"unknown native", []string{"--native", "nope"}, nil, "native"},
		{"bad duration", []string{"--native", "hello", "--header-timeout", "soon"}, nil, "header-timeout"},
		{"unknown loop", []string{"--loop", "trio", "app:application"}, nil, "loop"},
		{"unknown lifespan env", []string{"app:application"}, []string{"M0_LIFESPAN=sometimes"}, "lifespan"},
		{"unknown interface", []string{"--interface", "rsgi", "app:application"}, nil, "interface"},
		{"negative threads", []string{"--threads", "-1", "app:application"}, nil, "threads"},
		{"bad threads env", []string{"app:application"}, []string{"M0_THREADS=many"}, "threads"},
		{"relative root path", []string{"--root-path", "mount", "app:application"}, nil, "root-path"},
		{"native and app", []string{"--native", "hello", "app:application"}, nil, "native"},
		{"no application", nil, nil, "module:attr"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := runToExit(t, append(cleanEnv(), tc.env...), tc.args...)
			if status != 2 {
				t.Fatalf("exit status %d, want 2; output %q", status, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.flag) {
				t.Fatalf("want one line naming %s, got %q", tc.flag, out)
			}
		})
	}
}

// TestHelpListsEveryFlag: --help names every flag with its M0_ variable.
func TestHelpListsEveryFlag(t *testing.T) {
	out, err := exec.Command(binary, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"host", "port", "backlog", "max-connections", "header-timeout", "keepalive-timeout",
		"body-timeout", "graceful-timeout", "max-body-size", "max-head-size", "max-fields", "backend", "native",
		"interface", "factory", "app-dir", "venv", "root-path", "threads", "access-log"} {
		env := "M0_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
		// "--max-body-size BYTES (env M0_MAX_BODY_SIZE)": what it takes, then its variable.
		if !regexp.MustCompile(`\n  --` + flag + `( \S+)? \(env ` + env + `\)\n`).Match(out) {
			t.Errorf("--help lacks --%s (env %s)", flag, env)
		}
	}
}

// TestEnvironmentAndFlagPrecedence: M0_* configures, the flag wins.
func TestEnvironmentAndFlagPrecedence(t *testing.T) {
	s := start(t, variant{name: "env", env: []string{"M0_NATIVE=echo", "M0_MAX_BODY_SIZE=10"}}, "--native", "hello")
	resp, err := http.Post(s.url("/"), "text/plain", strings.NewReader(strings.Repeat("x", 100)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("M0_MAX_BODY_SIZE=10 not applied: status %d", resp.StatusCode)
	}
	resp, err = http.Get(s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "Hello, World!" {
		t.Fatalf("--native hello did not win over M0_NATIVE=echo: %q", body)
	}
}
