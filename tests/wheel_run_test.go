//go:build linux

package tests

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testWheelRun is TestWheel's part for what the wheel's Python package
// does beside the command line, in the venv it installed into:
// m0serve.run with an app object and with an import string under
// workers=2, serving until SIGINT or SIGTERM and then returning; an app object with
// workers=2 refused in one line; and the hint for a package the app
// imports that the venv lacks, naming the venv's interpreter and prefix
// and no --venv.
func testWheelRun(t *testing.T, venv, apps string, env []string, inVenv func(*testing.T, wheelAnswer, string)) {
	python := filepath.Join(venv, "bin", "python")
	script := func(body string) []string {
		return []string{"-c", "import sys; sys.path.insert(0, " + pyQuote(apps) + ")\nimport m0serve, wheel_app\n" + body +
			"\nsys.stderr.write('run returned\\n')"}
	}

	t.Run("run-object", func(t *testing.T) {
		s := startProgram(t, env, python, script(`m0serve.run(wheel_app.asgi_app, host="127.0.0.1", port=0, access_log=True, lifespan="off")`)...)
		inVenv(t, getAnswer(t, http.DefaultClient, s.url("/")), "asgi")
		// Ctrl-C, as in a terminal: the server's graceful stop, not
		// Python's KeyboardInterrupt.
		s.cmd.Process.Signal(syscall.SIGINT)
		if err := s.waitExit(time.Minute); err != nil || !strings.Contains(s.logs.String(), "run returned") ||
			!strings.Contains(s.logs.String(), `"GET / HTTP/1.1" 200`) || strings.Contains(s.logs.String(), "KeyboardInterrupt") {
			t.Errorf("after SIGINT: %v, want run() to return and exit 0, with the access log\n%s", err, s.logs)
		}
	})

	t.Run("run-import-string-workers", func(t *testing.T) {
		cmd := exec.Command(python, script(`m0serve.run("wheel_app:wsgi_app", host="127.0.0.1", port=0, workers=2, app_dir=`+pyQuote(apps)+`)`)...)
		cmd.Env = env
		s, ready := startLaunch(t, cmd, "m0serve.run(workers=2)", workersReady, 1)
		ws := s.awaitReady(t, ready, nil)
		a := getAnswer(t, oneShot(), ws.url("/"))
		inVenv(t, a, "wsgi")
		if a.Pid == ws.master {
			t.Errorf("the master (pid %d) answered", a.Pid)
		}
		ws.cmd.Process.Signal(syscall.SIGTERM)
		if err := ws.waitExit(time.Minute); err != nil || !strings.Contains(ws.logs.String(), "run returned") {
			t.Errorf("after SIGTERM: %v, want run() to return\n%s", err, ws.logs)
		}
	})

	t.Run("run-object-workers", func(t *testing.T) {
		code, out := runProgram(t, env, python, script(`m0serve.run(wheel_app.wsgi_app, workers=2)`)...)
		want := `ValueError: m0serve.run: with workers=2 each worker imports the app: pass it as an import string, e.g. m0serve.run("main:app", ...), not the app object`
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("exit %d, %q; want 1 and %q", code, out, want)
		}
	})

	t.Run("run-bad-option", func(t *testing.T) {
		code, out := runProgram(t, env, python, script(`m0serve.run(wheel_app.wsgi_app, port="x")`)...)
		if code != 2 || !strings.Contains(out, `m0serve: --port "x": want a whole number`) || strings.Contains(out, "run returned") {
			t.Errorf("exit %d, %q; want 2 and the flag's error", code, out)
		}
	})

	t.Run("missing-package", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "bad_dep.py"), "import flaskzzz\napp = None\n")
		code, out := runProgram(t, env, filepath.Join(venv, "bin", "m0serve"), "--app-dir", dir, "bad_dep:app")
		// The console script's interpreter is its shebang's, bin/python3.
		python3 := filepath.Join(venv, "bin", "python3")
		want := "m0serve runs in " + python3 + " (CPython "
		install := `sys.prefix ` + venv + `): install what provides "flaskzzz" there (` + python3 + " -m pip install ...)."
		if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, install) || strings.Contains(out, "--venv") {
			t.Errorf("exit %d:\n%s\nwant 2, %q and %q, no --venv", code, out, want, install)
		}
	})
}

// pyQuote is s as a Python string literal.
func pyQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
