//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportErrorsForPeople: an app module that is not there is
// uvicorn's one line (`Could not import module "x"`), without importlib's
// frozen frames unless --log-level debug; a package the app imports
// that is not there names the Python m0serve embeds and how to give it a
// venv; with --workers the worker says the same, and the master exits
// with the same status as a single process. Each is an ERROR line
// of the log.
func TestImportErrorsForPeople(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "needsdep.py"), []byte("import no_such_dependency_m0\napp = None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	venv := t.TempDir()
	if out, err := exec.Command(systemPython, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("making a venv: %v\n%s", err, out)
	}
	cases := []struct {
		name   string
		args   []string
		status int
		want   []string
		not    []string
	}{
		{"the app's module", []string{"no_such_app_m0:app"}, 2,
			[]string{`m0serve: cannot load the application no_such_app_m0:app: Could not import module "no_such_app_m0" (not in ` + dir}, []string{"Traceback", "frozen"}},
		{"the app's package", []string{"no_such_pkg_m0.app:app"}, 2,
			[]string{`Could not import module "no_such_pkg_m0.app"`}, []string{"Traceback", "frozen"}},
		{"debug shows the traceback", []string{"--log-level", "debug", "no_such_app_m0:app"}, 2,
			[]string{`Could not import module "no_such_app_m0"`, "Traceback (most recent call last):", "<frozen importlib._bootstrap>", "ModuleNotFoundError"}, nil},
		{"a dependency", []string{"needsdep:app"}, 2,
			[]string{"needsdep.py\", line 1, in <module>", "ModuleNotFoundError: No module named 'no_such_dependency_m0'",
				"m0serve: the Python m0serve embeds is CPython 3.", "sys.prefix ", "-m venv .venv", "--venv .venv"}, []string{"frozen"}},
		{"a dependency, in a venv", []string{"--venv", venv, "needsdep:app"}, 2,
			[]string{"importing from the venv " + venv + `: install what provides "no_such_dependency_m0" there`}, nil},
		{"a worker: the single process's status", []string{"--workers", "1", "no_such_app_m0:app"}, 2,
			[]string{`Could not import module "no_such_app_m0"`, "failed to boot"}, []string{"Traceback"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := runToExit(t, cleanEnv(), append([]string{"--port", "0", "--app-dir", dir}, tc.args...)...)
			if status != tc.status {
				t.Errorf("exit status %d, want %d\n%s", status, tc.status, out)
			}
			// A line of the log, with its time and level (a master's
			// start line comes first).
			errorLine := false
			for _, line := range strings.Split(out, "\n") {
				if m := logLevel.FindStringSubmatch(line); m != nil && m[1] == "ERROR" {
					errorLine = true
				}
			}
			if !errorLine {
				t.Errorf("not an ERROR line of the log:\n%s", out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(out, not) {
					t.Errorf("output has %q:\n%s", not, out)
				}
			}
		})
	}
}
