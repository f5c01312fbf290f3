//go:build linux

package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
)

// TestMountsMixed: a Flask app under /w, Starlette apps under /a and
// /a/b, a plain WSGI app at / and another at /a/deep, in one process and under
// --workers 2: each app sees its own prefix (SCRIPT_NAME for WSGI,
// root_path with the path including it for ASGI, as uvicorn's
// --root-path), its redirects and url_for point under it, the longest
// prefix wins by whole segments, the ASGI mount's WebSocket is routed
// by prefix too, and each one's lifespan (its own state) runs in every worker, startup before
// the first request and shutdown at the end.
func TestMountsMixed(t *testing.T) {
	for _, workers := range []string{"1", "2"} {
		t.Run("workers"+workers, func(t *testing.T) {
			dir := t.TempDir()
			v := wsgiVariant("E2E_DIR=" + dir)
			s := start(t, v, withVenv(t, "--app-dir", appsDir(t), "--workers", workers,
				"--mount", "/w=mounts_app:flask", "--mount", "/a=mounts_app:starlette",
				"--mount", "/=mounts_app:site", "--mount", "/a/deep=mounts_app:site",
				"--mount", "/a/b=mounts_app:other")...)
			host := s.addr
			checkJSON(t, s.url("/w/who"), map[string]any{"app": "flask", "script_root": "/w", "path": "/who", "url": "/w/who", "full": "http://" + host + "/w/who"})
			checkJSON(t, s.url("/a/who"), map[string]any{"app": "starlette", "root_path": "/a", "path": "/a/who", "url": "http://" + host + "/a/who", "started": "a"})
			checkJSON(t, s.url("/a/b/who"), map[string]any{"app": "starlette", "root_path": "/a/b", "path": "/a/b/who", "url": "http://" + host + "/a/b/who", "started": "b"})
			if resp, _ := get(t, s.url("/w/go")); resp.StatusCode != 302 || resp.Header.Get("Location") != "/w/who" {
				t.Errorf("flask redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			if resp, _ := get(t, s.url("/a/go")); resp.StatusCode != 307 || resp.Header.Get("Location") != "http://"+host+"/a/who" {
				t.Errorf("starlette redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			for target, want := range map[string]string{
				"/x":          "site '' '/x'",
				"/ab":         "site '' '/ab'",
				"/wx/who":     "site '' '/wx/who'",
				"/a/deep/y":   "site '/a/deep' '/y'",
				"/a/deep":     "site '/a/deep' ''",
				"/a/deeper/y": "",
			} {
				resp, body := get(t, s.url(target))
				if want == "" {
					// Under /a, not /a/deep: Starlette's 404.
					if resp.StatusCode != 404 || strings.HasPrefix(body, "site") {
						t.Errorf("%s: %d %q", target, resp.StatusCode, body)
					}
					continue
				}
				if resp.StatusCode != 200 || body != want {
					t.Errorf("%s: %d %q, want %q", target, resp.StatusCode, body, want)
				}
			}
			ctx := wsContext(t)
			c, _, err := coder.Dial(ctx, "ws://"+host+"/a/echo", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if err := c.Write(ctx, coder.MessageText, []byte("hi")); err != nil {
				t.Fatal(err)
			}
			if _, p, err := c.Read(ctx); err != nil || string(p) != "/a /a/echo hi" {
				t.Fatalf("websocket read %q %v", p, err)
			}
			c2, _, err := coder.Dial(ctx, "ws://"+host+"/a/b/echo", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.CloseNow()
			if err := c2.Write(ctx, coder.MessageText, []byte("hi")); err != nil {
				t.Fatal(err)
			}
			if _, p, err := c2.Read(ctx); err != nil || string(p) != "/a/b /a/b/echo hi" {
				t.Fatalf("websocket read %q %v", p, err)
			}
			s.stop()
			n := 1 // one lifespan per worker
			if workers == "2" {
				n = 2
			}
			lines := readLines(t, filepath.Join(dir, "lifespan"))
			for _, name := range []string{"a", "b"} {
				if countPrefix(lines, "startup "+name+" ") != n || countPrefix(lines, "shutdown "+name+" ") != n {
					t.Fatalf("lifespan lines %q, want %d startups and shutdowns of %s\n%s", lines, n, name, s.logs)
				}
			}
		})
	}
}

// TestMountsASGIOnly: ASGI mounts alone share the event loop the I/O
// thread steps (no WSGI threads hold the GIL), each with its own
// root_path, lifespan state and WebSockets; a path no mount holds is 404
// without entering Python.
func TestMountsASGIOnly(t *testing.T) {
	dir := t.TempDir()
	s := start(t, wsgiVariant("E2E_DIR="+dir), withVenv(t, "--app-dir", appsDir(t),
		"--mount", "/a=mounts_app:starlette", "--mount", "/a/b=mounts_app:other")...)
	host := s.addr
	checkJSON(t, s.url("/a/who"), map[string]any{"root_path": "/a", "path": "/a/who", "url": "http://" + host + "/a/who", "started": "a"})
	checkJSON(t, s.url("/a/b/who"), map[string]any{"root_path": "/a/b", "path": "/a/b/who", "url": "http://" + host + "/a/b/who", "started": "b"})
	if resp, body := get(t, s.url("/who")); resp.StatusCode != 404 || !strings.Contains(body, "no application is mounted here") {
		t.Errorf("/who: %d %q", resp.StatusCode, body)
	}
	ctx := wsContext(t)
	c, _, err := coder.Dial(ctx, "ws://"+host+"/a/b/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, coder.MessageText, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, p, err := c.Read(ctx); err != nil || string(p) != "/a/b /a/b/echo hi" {
		t.Fatalf("websocket read %q %v", p, err)
	}
	s.stop()
	lines := readLines(t, filepath.Join(dir, "lifespan"))
	want := []string{"startup a", "startup b", "shutdown b", "shutdown a"}
	if len(lines) != len(want) {
		t.Fatalf("lifespan lines %q, want %q in that order", lines, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w+" ") {
			t.Fatalf("lifespan lines %q, want %q in that order", lines, want)
		}
	}
}

// TestMountsRefused: a mounted ASGI app whose lifespan startup fails
// fails the start, as a single app's does, whether it is the first ASGI
// mount or one beside it.
func TestMountsRefused(t *testing.T) {
	env := append(cleanEnv(), "E2E_DIR="+t.TempDir())
	run := func(args ...string) (int, string) {
		return runToExit(t, env, append(withVenv(t, "--port", "0", "--app-dir", appsDir(t)), args...)...)
	}
	status, out := run("--mount", "/a=mounts_app:failing", "--mount", "/=mounts_app:site")
	if status != 3 || !strings.Contains(out, "m0 mounted database unreachable") || strings.Contains(out, "serving on") {
		t.Fatalf("failing startup: status %d\n%s", status, out)
	}
	status, out = run("--mount", "/a=mounts_app:starlette", "--mount", "/b=mounts_app:failing")
	if status != 3 || !strings.Contains(out, "m0 mounted database unreachable") || strings.Contains(out, "serving on") {
		t.Fatalf("failing startup beside another: status %d\n%s", status, out)
	}
}

func checkJSON(t *testing.T, url string, want map[string]any) {
	t.Helper()
	resp, body := get(t, url)
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 {
		t.Errorf("%s: %d %q %v", url, resp.StatusCode, body, err)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s is %v, want %v (%s)", url, k, got[k], v, body)
		}
	}
}

// readLines is the file's lines, once it has stopped changing (a
// worker's shutdown may land just after its master's exit).
func readLines(t *testing.T, path string) []string {
	t.Helper()
	var last string
	for i := 0; i < 50; i++ {
		data, _ := os.ReadFile(path)
		if string(data) == last && last != "" {
			break
		}
		last = string(data)
		time.Sleep(20 * time.Millisecond)
	}
	return strings.Split(strings.TrimSpace(last), "\n")
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}
