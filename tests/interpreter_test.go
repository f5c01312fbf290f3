//go:build linux

package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pythonReport is what tests/apps/http_app.py's /python answers.
type pythonReport struct {
	Executable string `json:"executable"`
	Prefix     string `json:"prefix"`
	BasePrefix string `json:"base_prefix"`
	OS         string `json:"os"`
	UVLoop     bool   `json:"uvloop"`
	Flask      string `json:"flask"`
}

func reportPython(t *testing.T, s *server) pythonReport {
	t.Helper()
	resp, body := get(t, s.url("/python"))
	var r pythonReport
	if err := json.Unmarshal([]byte(body), &r); resp.StatusCode != 200 || err != nil {
		t.Fatalf("/python: %d %q: %v", resp.StatusCode, body, err)
	}
	return r
}

// systemPrefix and systemVersion are the embedded Python's (Debian's).
func systemPython3(t *testing.T) (prefix, version string) {
	t.Helper()
	out, err := exec.Command(systemPython, "-c", "import sys; print(sys.prefix, '%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatal(err)
	}
	prefix, version, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	return prefix, version
}

// fakePythonFirst makes a directory that looks like another Python of the
// same version (bin/python3, lib/python3.X) and returns a PATH with its
// bin first, as a pyenv or /opt Python on PATH looks to CPython's search.
func fakePythonFirst(t *testing.T, prefix, version string) string {
	t.Helper()
	fake := t.TempDir()
	bin := filepath.Join(fake, "bin")
	if err := os.MkdirAll(filepath.Join(fake, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte("#!/bin/sh\necho not this python >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdlib := filepath.Join(prefix, "lib", "python"+version)
	if err := os.Symlink(stdlib, filepath.Join(fake, "lib", "python"+version)); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + bin + ":" + os.Getenv("PATH")
}

// The embedded Python is the one the binary was built against whatever
// python3 comes first on PATH: its standard library, its dist-packages
// (Flask, uvloop) and sys.executable; with a venv (made by that Python,
// with the system's site-packages) the venv is sys.prefix and
// sys.executable, and Debian's dist-packages stay visible.
func TestPythonIgnoresPATH(t *testing.T) {
	prefix, version := systemPython3(t)
	path := fakePythonFirst(t, prefix, version)
	wantExecutable, err := filepath.EvalSymlinks(systemPython)
	if err != nil {
		t.Fatal(err)
	}
	wantOS := filepath.Join(prefix, "lib", "python"+version, "os.py")

	s := start(t, wsgiVariant(path, "VIRTUAL_ENV="), "--app-dir", appsDir(t), "http_app:app")
	r := reportPython(t, s)
	if exe, _ := filepath.EvalSymlinks(r.Executable); exe != wantExecutable || r.Prefix != prefix || r.OS != wantOS || !r.UVLoop || r.Flask == "" {
		t.Errorf("with another python3 first on PATH: %+v; want executable %s, prefix %s, os %s, uvloop and flask",
			r, wantExecutable, prefix, wantOS)
	}
	s.stop()

	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(systemPython, "-m", "venv", "--without-pip", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Fatalf("making a venv: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"VIRTUAL_ENV", []string{path, "VIRTUAL_ENV=" + venv}, nil},
		{"--venv", []string{path, "VIRTUAL_ENV="}, []string{"--venv", venv}},
	} {
		s := start(t, wsgiVariant(c.env...), append(c.args, "--app-dir", appsDir(t), "http_app:app")...)
		r := reportPython(t, s)
		if r.Executable != filepath.Join(venv, "bin", "python") || r.Prefix != venv || r.BasePrefix != prefix ||
			r.OS != wantOS || !r.UVLoop || r.Flask == "" {
			t.Errorf("%s: %+v; want the venv's executable and prefix, base prefix %s, os %s, uvloop and flask",
				c.name, r, prefix, wantOS)
		}
		s.stop()
	}
}

// A stale VIRTUAL_ENV (the venv was deleted, or is not one) stops the
// start with a message that names the variable and how to get past it.
func TestStaleVirtualEnv(t *testing.T) {
	notVenv := t.TempDir()
	for _, venv := range []string{filepath.Join(notVenv, "deleted"), notVenv} {
		status, out := runToExit(t, append(cleanEnv(), "VIRTUAL_ENV="+venv),
			"--port", "0", "--app-dir", appsDir(t), "http_app:app")
		if status != 2 {
			t.Errorf("VIRTUAL_ENV=%s: exit status %d, want 2\n%s", venv, status, out)
		}
		for _, want := range []string{"pybridge: VIRTUAL_ENV=" + venv, "unset VIRTUAL_ENV", "--venv"} {
			if !strings.Contains(out, want) {
				t.Errorf("VIRTUAL_ENV=%s: output lacks %q:\n%s", venv, want, out)
			}
		}
		if strings.Count(out, "\n") != 1 {
			t.Errorf("VIRTUAL_ENV=%s: want one line:\n%s", venv, out)
		}
	}
}
