//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestEnvFile: --env-file's variables reach the app, in a single process
// and in every worker; the environment's own win over the file's; an
// M0_* variable in it sets its flag (the access log here). An unknown
// M0_* variable is warned about once, by the master alone.
func TestEnvFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "app.env")
	text := "# the app's settings\nGREETING=\"hello world\"\nexport MINE=from-file\nM0_ACCESS_LOG=true\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"MINE=from-env", "M0_ACESS_LOG=1"}
	for _, workers := range []bool{false, true} {
		var s *server
		if workers {
			s = startWorkersApp(t, appsDir(t), "osenv_app:app", env, "--workers", "2", "--env-file", file).server
		} else {
			s = start(t, wsgiVariant(env...), "--app-dir", appsDir(t), "--env-file", file, "osenv_app:app")
		}
		for name, want := range map[string]string{"GREETING": "hello world", "MINE": "from-env"} {
			if _, body := get(t, s.url("/"+name)); !strings.HasPrefix(body, want+"\n") {
				t.Errorf("%v: %s is %q, want %q", workers, name, body, want)
			}
		}
		s.stop()
		logs := s.logs.String()
		if !strings.Contains(logs, `"GET /GREETING HTTP/1.1" 200`) {
			t.Errorf("%v: M0_ACCESS_LOG in the file: no access log:\n%s", workers, logs)
		}
		warning := "[WARNING] m0serve: M0_ACESS_LOG (M0_ACCESS_LOG?) is set but no flag reads it"
		if strings.Count(logs, warning) != 1 {
			t.Errorf("%v: want one %q:\n%s", workers, warning, logs)
		}
	}
	code, out := runToExit(t, cleanEnv(), "--env-file", filepath.Join(t.TempDir(), "none.env"), "--native", "hello")
	if code != 2 || !strings.HasPrefix(out, "m0serve: --env-file ") || strings.Count(out, "\n") != 1 {
		t.Errorf("a missing --env-file: %d %q", code, out)
	}
}

// TestSignalDuringImport: a SIGINT while the app imports is not lost:
// the server stops once the import is over, with status 0 and before it
// serves; a second one exits at once (130) without waiting for the
// import, as a second signal does later.
func TestSignalDuringImport(t *testing.T) {
	for _, signals := range []int{1, 2} {
		dir := t.TempDir()
		started, done := filepath.Join(dir, "started"), filepath.Join(dir, "done")
		env := append(cleanEnv(), "SLOW_IMPORT_STARTED="+started, "SLOW_IMPORT_DONE="+done, "SLOW_IMPORT_SECONDS=3")
		cmd := exec.Command(binary, "--port", "0", "--app-dir", appsDir(t), "slow_import_app:app")
		cmd.Env = env
		logs := &logBuffer{}
		cmd.Stdout, cmd.Stderr = logWriter{logs}, logWriter{logs}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFile(t, started)
		for range signals {
			cmd.Process.Signal(syscall.SIGINT)
			time.Sleep(100 * time.Millisecond)
		}
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		_, statErr := os.Stat(done)
		switch {
		case signals == 1 && (err != nil || !strings.Contains(logs.String(), "interrupt while the app starts: stopping once it has") ||
			!strings.Contains(logs.String(), "m0serve: stopped") || statErr != nil):
			t.Errorf("one SIGINT during the import: %v\n%s", err, logs)
		case signals == 2 && (code != 130 || statErr == nil):
			t.Errorf("two SIGINTs during the import: exit %d (want 130), import finished: %v\n%s", code, statErr == nil, logs)
		}
	}
}

// TestAppFile: `m0serve path/app.py` serves the module in that file,
// imported from its directory, single and under --workers.
func TestAppFile(t *testing.T) {
	file := filepath.Join(appsDir(t), "osenv_app.py")
	s := start(t, wsgiVariant("OSENV_PROBE=seen"), file)
	if resp, body := get(t, s.url("/OSENV_PROBE")); resp.StatusCode != 200 || !strings.HasPrefix(body, "seen\n") {
		t.Errorf("m0serve %s: %d %q", file, resp.StatusCode, body)
	}
	s.stop()
	w := startWorkersApp(t, appsDir(t), file+":app", []string{"OSENV_PROBE=seen"}, "--workers", "2")
	if resp, body := get(t, w.url("/OSENV_PROBE")); resp.StatusCode != 200 || !strings.HasPrefix(body, "seen\n") {
		t.Errorf("m0serve --workers 2 %s:app: %d %q", file, resp.StatusCode, body)
	}
}

// TestLogConfig: --log-config configures the app's Python logging before
// it imports, as uvicorn's: a dictConfig in JSON and in YAML, a
// fileConfig; uvicorn's own loggers in it get a warning that they
// configure nothing of m0serve's log; a broken file is one line, exit 2.
func TestLogConfig(t *testing.T) {
	dir := t.TempDir()
	dict := `{"version": 1, "disable_existing_loggers": false,
	 "formatters": {"f": {"format": "%(levelname)s configured-%(name)s %(message)s"}},
	 "handlers": {"h": {"class": "logging.StreamHandler", "formatter": "f", "stream": "ext://sys.stderr"}},
	 "loggers": {"logconfig_app": {"handlers": ["h"], "level": "INFO"}, "uvicorn.error": {"level": "INFO"}}}`
	files := map[string]string{
		"log.json": dict,
		"log.yaml": "version: 1\nformatters:\n  f:\n    format: '%(levelname)s configured-%(name)s %(message)s'\n" +
			"handlers:\n  h:\n    class: logging.StreamHandler\n    formatter: f\n    stream: ext://sys.stderr\n" +
			"loggers:\n  logconfig_app:\n    handlers: [h]\n    level: INFO\n",
		"log.ini": "[loggers]\nkeys=root,app\n[handlers]\nkeys=h\n[formatters]\nkeys=f\n" +
			"[logger_root]\nhandlers=\n[logger_app]\nqualname=logconfig_app\nhandlers=h\nlevel=INFO\n" +
			"[handler_h]\nclass=StreamHandler\nformatter=f\nargs=(sys.stderr,)\n" +
			"[formatter_f]\nformat=%(levelname)s configured-%(name)s %(message)s\n",
		"broken.json": "{",
	}
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	for _, name := range []string{"log.json", "log.yaml", "log.ini"} {
		s := startWSGI(t, "logconfig_app:app", withVenv(t, "--log-config", filepath.Join(dir, name))...)
		get(t, s.url("/x"))
		s.stop()
		logs := s.logs.String()
		if !strings.Contains(logs, "INFO configured-logconfig_app handled /x") {
			t.Errorf("%s: the app's logger is not configured:\n%s", name, logs)
		}
		warned := strings.Contains(logs, "configures uvicorn.error, uvicorn's own loggers: m0serve's log is not Python's")
		if warned != (name == "log.json") {
			t.Errorf("%s: warning about uvicorn's loggers %v:\n%s", name, warned, logs)
		}
	}
	code, out := runToExit(t, cleanEnv(), "--port", "0", "--app-dir", appsDir(t), "--log-config", filepath.Join(dir, "broken.json"), "logconfig_app:app")
	if code != 2 || !strings.Contains(out, "m0serve: --log-config: "+filepath.Join(dir, "broken.json")+": JSONDecodeError: ") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("a broken file: exit %d, %q", code, out)
	}
}

// TestPeerSpellingsServe: uvicorn's and Granian's spellings reach the
// server as m0serve's flags: --interface asgi3, --url-path-prefix (the
// root path), --access-log undone by --no-access-log, and a slip in one
// gets the nearest spelling.
func TestPeerSpellingsServe(t *testing.T) {
	s := startWSGI(t, "http_asgi_app:app", "--interface", "asgi3", "--url-path-prefix", "/api", "--access-log", "--no-access-log",
		"--timeout-keep-alive", "5", "--timeout-graceful-shutdown", "5")
	if resp, body := get(t, s.url("/x/scope")); resp.StatusCode != 200 || body != `{"path": "/api/x/scope", "root_path": "/api", "type": "http"}` {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
	s.stop()
	if strings.Contains(s.logs.String(), `"GET /x/scope`) {
		t.Errorf("--no-access-log: an access line:\n%s", s.logs)
	}
	code, out := runToExit(t, cleanEnv(), "--timeout-keepalive", "5", "--native", "hello")
	if code != 2 || out != "m0serve: unknown flag --timeout-keepalive; did you mean --timeout-keep-alive? (see --help)\n" {
		t.Errorf("a slip: %d %q", code, out)
	}
}
