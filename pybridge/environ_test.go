package pybridge

import (
	"encoding/json"
	"strconv"
	"testing"
)

func environOf(t *testing.T, j *Job) map[string]any {
	t.Helper()
	r := j.Response
	if r.Outcome() != Complete || r.Status() != 200 {
		t.Fatalf("outcome %d status %d body %q", r.Outcome(), r.Status(), r.Body())
	}
	var env map[string]any
	if err := json.Unmarshal(r.Body(), &env); err != nil {
		t.Fatalf("body %q: %v", r.Body(), err)
	}
	return env
}

func TestEnvironUnderValidator(t *testing.T) {
	app := loadApp(t, "environ_app:app")
	raw := loadApp(t, "environ_app:raw")
	cases := []struct {
		name string
		app  *App
		raw  string
		want map[string]any
		gone []string
	}{
		{
			name: "simple GET",
			raw:  "GET /hello/world?a=1&b=%20 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test/1\r\n\r\n",
			want: map[string]any{
				"REQUEST_METHOD": "GET", "SCRIPT_NAME": "", "PATH_INFO": "/hello/world",
				"QUERY_STRING": "a=1&b=%20", "SERVER_NAME": "test.local", "SERVER_PORT": "8080",
				"SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "54321",
				"RAW_URI": "/hello/world?a=1&b=%20", "HTTP_HOST": "example.com",
				"HTTP_USER_AGENT": "test/1", "wsgi.url_scheme": "http",
				"wsgi.version": []any{1.0, 0.0}, "wsgi.multithread": true,
				"wsgi.multiprocess": false, "wsgi.run_once": false,
				"wsgi.input_terminated": true, "wsgi.errors.is_stderr": true,
				"wsgi.file_wrapper": "FileWrapper",
			},
			// No AppSpec.ServerSoftware, no key.
			gone: []string{"CONTENT_TYPE", "CONTENT_LENGTH", "SERVER_SOFTWARE"},
		},
		{
			name: "percent-decoded latin-1 path, raw URI kept",
			raw:  "GET /caf%C3%A9/a%2Fb/%zz%e9 HTTP/1.0\r\nHost: x\r\n\r\n",
			want: map[string]any{
				// UTF-8 bytes decoded one per code point, as PEP 3333 wants.
				"PATH_INFO":       "/caf\u00c3\u00a9/a/b/%zz\u00e9",
				"RAW_URI":         "/caf%C3%A9/a%2Fb/%zz%e9",
				"QUERY_STRING":    "",
				"SERVER_PROTOCOL": "HTTP/1.0",
			},
		},
		{
			name: "content headers, repeats joined, cookies with semicolons, underscores dropped",
			raw: "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n" +
				"Accept: a/b\r\nX-Multi: one\r\nAccept: c/d\r\nCookie: a=1\r\nX-Multi: two\r\n" +
				"Cookie: b=2\r\nX_Sneaky: 1\r\nX-Latin: caf\xe9\r\n\r\n",
			want: map[string]any{
				"REQUEST_METHOD": "POST", "CONTENT_TYPE": "text/plain", "CONTENT_LENGTH": "0",
				"HTTP_ACCEPT": "a/b, c/d", "HTTP_X_MULTI": "one, two", "HTTP_COOKIE": "a=1; b=2",
				"HTTP_X_LATIN": "caf\u00e9",
			},
			gone: []string{"HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH", "HTTP_X_SNEAKY"},
		},
		{
			name: "unusual method and absolute-form target",
			app:  raw, // the validator warns on methods it does not know
			raw:  "PURGE http://example.com/p/q?x HTTP/1.1\r\nHost: example.com\r\n\r\n",
			want: map[string]any{
				"REQUEST_METHOD": "PURGE", "PATH_INFO": "/p/q", "QUERY_STRING": "x",
				"RAW_URI": "http://example.com/p/q?x",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := app
			if c.app != nil {
				a = c.app
			}
			j := newJob(t, a, c.raw)
			run(j)
			env := environOf(t, j)
			for k, want := range c.want {
				got, ok := env[k]
				if !ok {
					t.Errorf("%s missing", k)
					continue
				}
				if gs, ok := got.([]any); ok {
					ws := want.([]any)
					if len(gs) != len(ws) || gs[0] != ws[0] || gs[1] != ws[1] {
						t.Errorf("%s = %v, want %v", k, got, want)
					}
					continue
				}
				if got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			for _, k := range c.gone {
				if v, ok := env[k]; ok {
					t.Errorf("%s = %q, want it absent", k, v)
				}
			}
		})
	}
}

func TestEnvironRootPath(t *testing.T) {
	app, err := interp.LoadApp(AppSpec{Target: "environ_app:app", RootPath: "/mount", ServerName: "h", ServerPort: 80, URLScheme: "https",
		ServerSoftware: "m0serve/9.8.7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, script, path string }{
		{"/mount/a/b", "/mount", "/a/b"},
		{"/mount", "/mount", ""},
		{"/mountain", "/mount", "/mountain"}, // not under the prefix: kept whole
	} {
		j := newJob(t, app, "GET "+c.target+" HTTP/1.1\r\nHost: x\r\n\r\n")
		run(j)
		env := environOf(t, j)
		if env["SCRIPT_NAME"] != c.script || env["PATH_INFO"] != c.path || env["wsgi.url_scheme"] != "https" {
			t.Errorf("%s: SCRIPT_NAME %q PATH_INFO %q scheme %q", c.target, env["SCRIPT_NAME"], env["PATH_INFO"], env["wsgi.url_scheme"])
		}
		if env["SERVER_SOFTWARE"] != "m0serve/9.8.7" {
			t.Errorf("%s: SERVER_SOFTWARE %q, want m0serve/9.8.7", c.target, env["SERVER_SOFTWARE"])
		}
	}
}

// The library loaded at run time is the Python the shim was compiled
// against (M0_PYTHON_PC builds add an rpath for it).
func TestEmbeddedVersion(t *testing.T) {
	j := get(t, "bench_app:version", "/")
	if got := string(j.Response.Body()); got != Version() {
		t.Errorf("running Python %s, compiled against %s", got, Version())
	}
	t.Logf("Python %s", Version())
}

// The value caches hand back the same str only for the same bytes.
func TestEnvironValueCaches(t *testing.T) {
	app := loadApp(t, "environ_app:app")
	for i, c := range []struct{ val, path, query, addr string }{
		{"abc", "/a", "q=1", "10.0.0.1"},
		{"abd", "/a", "q=2", "10.0.0.1"},
		{"abc", "/b", "q=2", "10.0.0.2"},
		{"", "/b", "", "10.0.0.2"},
		{"abc", "/%62", "q=1", "10.0.0.1"},
	} {
		raw := "GET " + c.path
		if c.query != "" {
			raw += "?" + c.query
		}
		j := newJob(t, app, raw+" HTTP/1.1\r\nHost: x\r\nX-Val: "+c.val+"\r\n\r\n")
		j.Request.RemoteAddr = []byte(c.addr)
		j.Request.RemotePort = 1000 + i%2
		run(j)
		env := environOf(t, j)
		path := c.path
		if path == "/%62" {
			path = "/b"
		}
		if env["HTTP_X_VAL"] != c.val || env["PATH_INFO"] != path || env["QUERY_STRING"] != c.query ||
			env["REMOTE_ADDR"] != c.addr || env["REMOTE_PORT"] != strconv.Itoa(1000+i%2) {
			t.Errorf("request %d: X-Val %q PATH_INFO %q QUERY_STRING %q REMOTE_ADDR %q REMOTE_PORT %q",
				i, env["HTTP_X_VAL"], env["PATH_INFO"], env["QUERY_STRING"], env["REMOTE_ADDR"], env["REMOTE_PORT"])
		}
	}
}
