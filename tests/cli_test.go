//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// cliModules are the apps the command-line tests serve, written to a
// temporary directory: plain modules as a newcomer writes them.
var cliModules = map[string]string{
	"plain.py": `
def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"plain application"]

def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"plain app"]
`,
	"onlyapp.py": `
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"only app"]
`,
	"noapp.py": `
def handler(environ, start_response):
    start_response("200 OK", [])
    return []
`,
	"factory.py": `
import flask

def create_app():
    app = flask.Flask(__name__)

    @app.route("/")
    def index():
        return "made by create_app"

    return app
`,
}

func cliAppDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range cliModules {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestFlagsAfterTheApp: flags may follow module:attr (uvicorn's and
// Granian's habit), and a bare module serves its application, named in
// the log.
func TestFlagsAfterTheApp(t *testing.T) {
	s := start(t, wsgiVariant(), "--app-dir", cliAppDir(t), "plain", "--access-log", "--root-path", "/mount")
	resp, body := get(t, s.url("/mount/x"))
	if resp.StatusCode != 200 || body != "plain application" {
		t.Fatalf("GET /mount/x: %d %q", resp.StatusCode, body)
	}
	s.stop()
	logs := s.logs.String()
	for _, want := range []string{"m0serve: serving plain:application", `"GET /mount/x HTTP/1.1" 200 17`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}

// TestBareModuleApp: a module with no application serves its app.
func TestBareModuleApp(t *testing.T) {
	s := start(t, wsgiVariant(), "--app-dir", cliAppDir(t), "onlyapp")
	resp, body := get(t, s.url("/"))
	if resp.StatusCode != 200 || body != "only app" {
		t.Fatalf("GET /: %d %q", resp.StatusCode, body)
	}
	s.stop()
	if !strings.Contains(s.logs.String(), "m0serve: serving onlyapp:app") {
		t.Errorf("log does not name onlyapp:app:\n%s", s.logs)
	}
}

// TestFactoryNeedsTheFlag: a Flask create_app() served as the app is
// refused at start with a pointer to --factory (it would answer every
// request 500); with --factory, after the app, it serves.
func TestFactoryNeedsTheFlag(t *testing.T) {
	dir := cliAppDir(t)
	status, out := runToExit(t, cleanEnv(), "--port", "0", "--app-dir", dir, "factory:create_app")
	if status != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 ||
		!strings.Contains(out, "factory:create_app looks like an application factory") || !strings.Contains(out, "use --factory") {
		t.Fatalf("status %d, output %q; want 2 and one line suggesting --factory", status, out)
	}
	s := start(t, wsgiVariant(), "--app-dir", dir, "factory:create_app", "--factory")
	resp, body := get(t, s.url("/"))
	if resp.StatusCode != 200 || body != "made by create_app" {
		t.Fatalf("GET / with --factory: %d %q", resp.StatusCode, body)
	}
}

// TestBooleanEnvironment: M0_ACCESS_LOG takes yes/no, on/off, 1/0 and
// true/false in any case.
func TestBooleanEnvironment(t *testing.T) {
	dir := cliAppDir(t)
	for value, logs := range map[string]bool{"yes": true, "On": true, "1": true, "NO": false, "off": false} {
		t.Run(value, func(t *testing.T) {
			s := start(t, wsgiVariant("M0_ACCESS_LOG="+value), "--app-dir", dir, "plain:app")
			if resp, body := get(t, s.url("/")); resp.StatusCode != 200 || body != "plain app" {
				t.Fatalf("GET /: %d %q", resp.StatusCode, body)
			}
			s.stop()
			if got := strings.Contains(s.logs.String(), `"GET / HTTP/1.1" 200 9`); got != logs {
				t.Fatalf("M0_ACCESS_LOG=%s: access-log line %v, want %v:\n%s", value, got, logs, s.logs)
			}
		})
	}
}

// TestCommandLineMistakes: each is one line saying what to do, exit 2.
func TestCommandLineMistakes(t *testing.T) {
	dir := cliAppDir(t)
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"no application", nil, nil, "m0serve: no application: give module:attr, e.g. `m0serve main:app` (or --native NAME; see --help)"},
		{"two applications", []string{"plain", "--threads", "2", "onlyapp"}, nil, `one application at a time: got "plain", "onlyapp"`},
		{"-- ends the flags", []string{"plain", "--", "--threads"}, nil, `got "plain", "--threads"`},
		{"unknown flag", []string{"plain", "--prot", "9001"}, nil, "m0serve: unknown flag --prot; did you mean --port? (see --help)"},
		{"neither attribute", []string{"noapp"}, nil, `noapp: the module has no "application" or "app" attribute, nor noapp.asgi:application, noapp.wsgi:application or noapp.main:app: give module:attr`},
		{"bad boolean", []string{"plain"}, []string{"M0_ACCESS_LOG=sometimes"}, `M0_ACCESS_LOG="sometimes" (for --access-log): want true or false`},
		{"negative spare threads", []string{"plain", "--max-client-waits", "-1"}, nil, "m0serve: --max-client-waits: -1: want 0 to 512"},
		{"unknown protocol", []string{"plain"}, []string{"M0_HTTP=3"}, `m0serve: --http: "3": want auto, 1 or 2`},
		{"uvicorn's --http", []string{"plain"}, []string{"M0_HTTP=httptools"}, `m0serve: --http: "httptools": want auto, 1 or 2 (the HTTP versions served; m0serve has one parser of its own)`},
		{"no streams", []string{"plain", "--http2-max-concurrent-streams", "0"}, nil, "m0serve: --http2-max-concurrent-streams: must be between 1"},
		{"small window", []string{"plain", "--http2-initial-window-size", "1K"}, nil, "m0serve: --http2-initial-window-size: must be between 65535"},
		{"small frames", []string{"plain", "--http2-max-frame-size", "1000"}, nil, "m0serve: --http2-max-frame-size: must be between 16384"},
		{"tiny header list", []string{"plain", "--http2-max-header-list-size", "100"}, nil, "m0serve: --http2-max-header-list-size: must be between 1K"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--port", "0", "--app-dir", dir}, tc.args...)
			status, out := runToExit(t, append(cleanEnv(), tc.env...), args...)
			if status != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("status %d, output %q; want 2 and one line with %q", status, out, tc.want)
			}
		})
	}
}

// TestHelpLinesShort: --help is one short line per flag; figures live in
// the README.
func TestHelpLinesShort(t *testing.T) {
	status, out := runToExit(t, cleanEnv(), "--help")
	if status != 0 {
		t.Fatalf("--help: status %d\n%s", status, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 160 {
			t.Errorf("%d characters: %s", n, line)
		}
	}
}
