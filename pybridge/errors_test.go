package pybridge

import (
	"errors"
	"strings"
	"testing"
)

// Each misbehaviour before the head is final ends in the bridge's 500 with
// the traceback on stderr, close() is called, and the next request works.
func TestAppErrorsBeforeHead(t *testing.T) {
	for _, path := range []string{
		"/raise-before", "/raise-after-start", "/bad-status", "/bad-status-type",
		"/bad-header-crlf", "/bad-header-nul", "/bad-header-name",
		"/bad-header-type", "/bad-header-latin1", "/non-bytes", "/non-bytes-list",
		"/no-start", "/no-start-empty", "/twice", "/exc-info-after-body", "/bad-keyword",
	} {
		t.Run(path, func(t *testing.T) {
			j := get(t, "errors_app:app", path)
			r := j.Response
			if r.Outcome() != Complete || r.Status() != 500 || !r.AppError() ||
				string(r.Body()) != "Internal Server Error\n" || r.ContentLength() != int64(len(r.Body())) {
				t.Errorf("outcome %d status %d app error %v body %q", r.Outcome(), r.Status(), r.AppError(), r.Body())
			}
			if ct, _ := header(r, "Content-Type"); ct != "text/plain; charset=utf-8" || r.HeaderLen() != 1 {
				t.Errorf("500 headers: %d, Content-Type %q", r.HeaderLen(), ct)
			}
			next := get(t, "errors_app:app", "/ok")
			if next.Response.Status() != 200 || string(next.Response.Body()) != "fine" {
				t.Errorf("next request: %d %q", next.Response.Status(), next.Response.Body())
			}
		})
	}
}

// Hop-by-hop fields are not the app's error: Connection: close is kept
// as a wish to close, the others are dropped, the first one named.
func TestHopByHopFields(t *testing.T) {
	r := get(t, "errors_app:app", "/hop-by-hop").Response
	if r.Status() != 200 || r.AppError() || !r.Close() || string(r.DroppedField()) != "Keep-Alive" || r.HeaderLen() != 1 {
		t.Errorf("status %d app error %v close %v dropped %q headers %d", r.Status(), r.AppError(), r.Close(), r.DroppedField(), r.HeaderLen())
	}
	if v, _ := header(r, "X-Ok"); v != "y" {
		t.Errorf("X-Ok %q", v)
	}
	if r := get(t, "errors_app:app", "/ok").Response; r.Close() || r.DroppedField() != nil {
		t.Errorf("the next response: close %v dropped %q", r.Close(), r.DroppedField())
	}
}

func TestCloseAlwaysCalled(t *testing.T) {
	get(t, "errors_app:app", "/closed") // clear the record
	for _, path := range []string{"/ok", "/non-bytes", "/no-start", "/raise-in-close"} {
		get(t, "errors_app:app", path)
	}
	j := get(t, "errors_app:app", "/closed")
	if got, want := string(j.Response.Body()), "ok,non-bytes,no-start,raise-in-close"; got != want {
		t.Errorf("close() calls %q, want %q", got, want)
	}
}

// close() raising is logged; the response it followed stands.
func TestCloseRaisingKeepsResponse(t *testing.T) {
	j := get(t, "errors_app:app", "/raise-in-close")
	if j.Response.Status() != 200 || string(j.Response.Body()) != "kept" || j.Response.AppError() {
		t.Errorf("%d %q app error %v", j.Response.Status(), j.Response.Body(), j.Response.AppError())
	}
}

// exc_info before the head is final replaces it (PEP 3333).
func TestExcInfoReplacesHead(t *testing.T) {
	j := get(t, "errors_app:app", "/exc-info-replace")
	r := j.Response
	ct, _ := header(r, "Content-Type")
	if r.Status() != 503 || string(r.Reason()) != "Service Unavailable" || ct != "text/html" ||
		r.HeaderLen() != 1 || string(r.Body()) != "replaced" {
		t.Errorf("%d %q %d headers, Content-Type %q, body %q", r.Status(), r.Reason(), r.HeaderLen(), ct, r.Body())
	}
}

func TestExcInfoByKeyword(t *testing.T) {
	r := get(t, "errors_app:app", "/exc-info-keyword").Response
	if r.Status() != 502 || string(r.Body()) != "by keyword" {
		t.Errorf("%d %q", r.Status(), r.Body())
	}
}

// Once a streamed head is out, an error aborts: the server must close
// without a valid end.
func TestAppErrorAfterStreamedHeadAborts(t *testing.T) {
	for _, path := range []string{"/raise-mid-stream", "/exc-info-after-body"} {
		t.Run(path, func(t *testing.T) {
			j := newJob(t, loadApp(t, "errors_app:app"), "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
			w := &recorder{}
			j.Writer = w
			run(j)
			if j.Response.Outcome() != Aborted || !j.Response.AppError() || w.heads != 1 || w.status != 200 {
				t.Errorf("outcome %d app error %v heads %d status %d", j.Response.Outcome(), j.Response.AppError(), w.heads, w.status)
			}
			if len(w.chunks) == 0 {
				t.Errorf("no body chunk reached the writer before the error")
			}
		})
	}
}

// A client gone mid-stream aborts without blaming the app, and close()
// still runs.
func TestClientGoneMidStream(t *testing.T) {
	get(t, "errors_app:app", "/closed")
	j := newJob(t, loadApp(t, "body_app:app"), "GET /generator HTTP/1.1\r\nHost: x\r\n\r\n")
	w := &recorder{failAfter: 2}
	j.Writer = w
	run(j)
	if j.Response.Outcome() != Aborted || j.Response.AppError() {
		t.Errorf("outcome %d app error %v, want an abort that is not the app's", j.Response.Outcome(), j.Response.AppError())
	}
	if strings.Join(w.chunks, "") != "chunk0;" {
		t.Errorf("chunks %q", w.chunks)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ target, want string }{
		{"broken_app:app", "ModuleNotFoundError: No module named 'no_such_module_m0serve'"},
		{"no_such_app:app", "ModuleNotFoundError: No module named 'no_such_app'"},
		{"bench_app:missing", "AttributeError"},
		{"factory_app", `factory_app: the module has no "application" or "app" attribute, nor factory_app.asgi:application, factory_app.wsgi:application or factory_app.main:app: give module:attr`},
		{"factory_app:create_app", "factory_app:create_app looks like an application factory (a function taking no arguments): use --factory"},
		{"factory_app:create_with_options", "looks like an application factory"},
		{"factory_app:maker.build", "looks like an application factory"},
		{"bench_app:", "want module:attr"},
		{"bench_app:BODY", "is not callable"},
	} {
		_, err := interp.LoadApp(AppSpec{Target: c.target})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.target, err, c.want)
		}
	}
	_, err := interp.LoadApp(AppSpec{Target: "broken_app:app"})
	if err == nil || !strings.Contains(err.Error(), "Traceback") || !strings.Contains(err.Error(), "broken_app.py") {
		t.Errorf("no traceback naming the file in %v", err)
	}
	// The module a ModuleNotFoundError names: the app's own, or one it imports.
	for target, want := range map[string]string{
		"broken_app:app": "no_such_module_m0serve", "no_such_app:app": "no_such_app", "bench_app:missing": "",
	} {
		_, err := interp.LoadApp(AppSpec{Target: target})
		var load *LoadError
		if !errors.As(err, &load) || load.Missing != want {
			t.Errorf("%s: %#v, want Missing %q", target, err, want)
		}
	}
}

// TestLoadTargetMistakes: a target that imports but names no app is one
// line, not a traceback.
func TestLoadTargetMistakes(t *testing.T) {
	for _, target := range []string{"factory_app", "factory_app:create_app"} {
		_, err := interp.LoadApp(AppSpec{Target: target})
		var mistake *TargetError
		if !errors.As(err, &mistake) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %#v, want a one-line *TargetError", target, err)
		}
	}
}

// TestDefaultAttribute: a bare module serves its application, else its
// app, else MODULE.asgi:application, MODULE.wsgi:application or
// MODULE.main:app (the seed's order).
func TestDefaultAttribute(t *testing.T) {
	for _, c := range []struct{ target, want string }{
		{"default_app", "default_app:application"},
		{"bench_app", "bench_app:app"},
		{"asgi_app", "asgi_app:app"},
		{"default_pkg", "default_pkg.wsgi:application"},
		{"default_pkg.main_only", "default_pkg.main_only.main:app"},
	} {
		a, err := interp.LoadApp(AppSpec{Target: c.target})
		if err != nil {
			t.Errorf("%s: %v", c.target, err)
			continue
		}
		if got := a.Spec().Target; got != c.want {
			t.Errorf("%s: serves %s, want %s", c.target, got, c.want)
		}
	}
}

// TestNotFactories: apps that take arguments, classes and instances load
// as apps; a factory loads with Factory.
func TestNotFactories(t *testing.T) {
	for _, c := range []struct {
		target  string
		factory bool
	}{
		{"factory_app:wsgi", false},
		{"factory_app:asgi", false},
		{"factory_app:needs_config", false},
		{"factory_app:variadic", false},
		{"factory_app:ASGI2", false},
		{"factory_app:Maker", false},
		{"factory_app:maker", false},
		{"factory_app:create_app", true},
		{"factory_app:create_with_options()", false},
		{"factory_app:maker.build", true},
	} {
		if _, err := interp.LoadApp(AppSpec{Target: c.target, Factory: c.factory}); err != nil {
			t.Errorf("%s (factory %v): %v", c.target, c.factory, err)
		}
	}
}

func TestInterfaceDetection(t *testing.T) {
	for _, c := range []struct {
		target  string
		factory bool
		want    Interface
	}{
		{"asgi_app:app", false, ASGI},
		{"asgi_app:instance", false, ASGI},
		{"asgi_app:wsgi", false, WSGI},
		{"body_app:app", false, WSGI},
		{"asgi_app:make_wsgi()", false, WSGI},
		{"asgi_app:make_wsgi", true, WSGI},
		{"asgi_app:make_asgi()", false, ASGI},
	} {
		a, err := interp.LoadApp(AppSpec{Target: c.target, Factory: c.factory})
		if err != nil {
			t.Errorf("%s: %v", c.target, err)
			continue
		}
		if a.Interface != c.want {
			t.Errorf("%s: %v, want %v", c.target, a.Interface, c.want)
		}
	}
}
