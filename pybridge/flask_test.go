package pybridge

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// flaskApp loads the Flask test app (see missingModule for a Python
// without Flask).
func flaskApp(t *testing.T, target string, factory bool) *App {
	t.Helper()
	app, err := interp.LoadApp(AppSpec{Target: target, Factory: factory})
	missingModule(t, err, "flask")
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestFlask(t *testing.T) {
	app := flaskApp(t, "flask_app:app", false)
	j := newJob(t, app, "GET /hello/m0serve?q=%C3%A9t%C3%A9 HTTP/1.1\r\nHost: x\r\nUser-Agent: bridge-test\r\n\r\n")
	run(j)
	r := j.Response
	if r.Status() != 200 || r.Outcome() != Complete {
		t.Fatalf("%d outcome %d: %q", r.Status(), r.Outcome(), r.Body())
	}
	if ct, _ := header(r, "Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var got map[string]string
	if err := json.Unmarshal(r.Body(), &got); err != nil {
		t.Fatalf("%q: %v", r.Body(), err)
	}
	if got["greeting"] != "hello m0serve" || got["q"] != "été" || got["agent"] != "bridge-test" {
		t.Errorf("%v", got)
	}

	j = newJob(t, app, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("abc"), []byte("def")}}
	run(j)
	if string(j.Response.Body()) != "fedcba" {
		t.Errorf("echo: %d %q", j.Response.Status(), j.Response.Body())
	}

	j = newJob(t, app, "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
	run(j)
	if j.Response.Status() != 404 || j.Response.AppError() {
		t.Errorf("unknown route: %d", j.Response.Status())
	}
}

func TestFlaskInterfaceAndFactory(t *testing.T) {
	for _, c := range []struct {
		target  string
		factory bool
	}{{"flask_app:app", false}, {"flask_app:create_app()", false}, {"flask_app:create_app", true}} {
		if a := flaskApp(t, c.target, c.factory); a.Interface != WSGI {
			t.Errorf("%s: %v, want wsgi", c.target, a.Interface)
		}
	}
}

// missingModule handles a framework missing from the embedded Python.
// `make test` installs every one the tests use for the default Python
// (Debian's 3.11), so there a missing module fails the test. Only under
// another Python chosen with M0_PYTHON_PC (`make test-pythons`, over pyenv
// builds that have no frameworks) is the case skipped, and said so.
func missingModule(t testing.TB, err error, module string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "No module named '"+module+"'") {
		return
	}
	if os.Getenv("M0_PYTHON_PC") == "" {
		t.Fatalf("%s is missing from the default Python %s: `make test` installs it", module, Version())
	}
	t.Skipf("%s is not installed for Python %s (M0_PYTHON_PC)", module, Version())
}
