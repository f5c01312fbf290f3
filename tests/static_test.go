//go:build linux

package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// staticTree is a mount with a file, its precompressed siblings, a
// symlink inside and one out of the directory, beside a secret.
func staticTree(t *testing.T) (mount string) {
	t.Helper()
	dir := t.TempDir()
	mount = filepath.Join(dir, "static")
	for _, d := range []string{mount, filepath.Join(mount, "css"), filepath.Join(mount, ".git")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "secret.txt"), "secret")
	writeFile(t, filepath.Join(mount, "css", "site.css"), "body { color: red }\n")
	writeFile(t, filepath.Join(mount, "app.js"), "plain js")
	writeFile(t, filepath.Join(mount, "app.js.gz"), "gzip bytes")
	writeFile(t, filepath.Join(mount, "app.js.br"), "brotli bytes")
	writeFile(t, filepath.Join(mount, ".env"), "SECRET_KEY=secret")
	writeFile(t, filepath.Join(mount, ".git", "config"), "[secret]")
	for link, target := range map[string]string{"inside.css": "css/site.css", "outside.txt": "../secret.txt"} {
		if err := os.Symlink(target, filepath.Join(mount, link)); err != nil {
			t.Fatal(err)
		}
	}
	return mount
}

func staticGet(t *testing.T, s *server, method, path string, fields ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		req.Header.Set(fields[i], fields[i+1])
	}
	// No transparent gzip: the test asks for encodings itself.
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, s.logs)
	}
	return resp, string(readBody(t, resp))
}

// TestStaticFiles: --static-path-mount/--static-path-route served by the
// server beside a WSGI app: types, validators and 304, ranges, HEAD,
// Cache-Control, precompressed siblings, every way out of the directory
// refused, and an access-log line for each.
func TestStaticFiles(t *testing.T) {
	mount := staticTree(t)
	s := startWSGI(t, "proxy_app:app", "--static-path-mount", mount, "--static-path-route", "/assets", "--static-path-expires", "1h", "--access-log")

	resp, body := staticGet(t, s, "GET", "/assets/css/site.css")
	etag, modified := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.StatusCode != 200 || body != "body { color: red }\n" || resp.Header.Get("Content-Type") != "text/css; charset=utf-8" ||
		etag == "" || modified == "" || resp.Header.Get("Cache-Control") != "max-age=3600" {
		t.Errorf("GET: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp, _ := staticGet(t, s, "GET", "/assets/css/site.css", "If-None-Match", etag); resp.StatusCode != 304 {
		t.Errorf("If-None-Match: %d", resp.StatusCode)
	}
	if resp, _ := staticGet(t, s, "GET", "/assets/css/site.css", "If-Modified-Since", modified); resp.StatusCode != 304 {
		t.Errorf("If-Modified-Since: %d", resp.StatusCode)
	}
	// A date in the future is not a valid one: the file, as nginx sends.
	future := time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat)
	if resp, body := staticGet(t, s, "GET", "/assets/css/site.css", "If-Modified-Since", future); resp.StatusCode != 200 || body == "" {
		t.Errorf("If-Modified-Since in the future: %d", resp.StatusCode)
	}
	if resp, body := staticGet(t, s, "GET", "/assets/css/site.css", "If-None-Match", `"other"`); resp.StatusCode != 200 || body == "" {
		t.Errorf("If-None-Match another: %d", resp.StatusCode)
	}
	resp, body = staticGet(t, s, "GET", "/assets/css/site.css", "Range", "bytes=7-11")
	if resp.StatusCode != 206 || body != "color" || resp.Header.Get("Content-Range") != "bytes 7-11/20" {
		t.Errorf("Range: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp, body := staticGet(t, s, "GET", "/assets/css/site.css", "Range", "bytes=-3"); resp.StatusCode != 206 || body != " }\n" {
		t.Errorf("suffix Range: %d %q", resp.StatusCode, body)
	}
	resp, _ = staticGet(t, s, "GET", "/assets/css/site.css", "Range", "bytes=100-")
	if resp.StatusCode != 416 || resp.Header.Get("Content-Range") != "bytes */20" {
		t.Errorf("unsatisfiable Range: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = staticGet(t, s, "HEAD", "/assets/css/site.css")
	if resp.StatusCode != 200 || body != "" || resp.ContentLength != 20 {
		t.Errorf("HEAD: %d %q %d", resp.StatusCode, body, resp.ContentLength)
	}
	for _, c := range []struct{ accept, body, encoding string }{
		{"gzip, br", "brotli bytes", "br"}, {"gzip", "gzip bytes", "gzip"}, {"br;q=0, gzip", "gzip bytes", "gzip"}, {"", "plain js", ""},
	} {
		resp, body := staticGet(t, s, "GET", "/assets/app.js", "Accept-Encoding", c.accept)
		if resp.StatusCode != 200 || body != c.body || resp.Header.Get("Content-Encoding") != c.encoding ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: %d %q %v", c.accept, resp.StatusCode, body, resp.Header)
		}
	}
	if resp, body := staticGet(t, s, "GET", "/assets/inside.css"); resp.StatusCode != 200 || body != "body { color: red }\n" {
		t.Errorf("symlink inside: %d %q", resp.StatusCode, body)
	}
	if resp, _ := staticGet(t, s, "POST", "/assets/app.js"); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", resp.StatusCode, resp.Header)
	}
	for _, path := range []string{
		"/assets/outside.txt", "/assets/../secret.txt", "/assets/css/../../secret.txt", "/assets/%2e%2e/secret.txt",
		"/assets/css%2f..%2f..%2fsecret.txt", "/assets/css/site.css%00", "/assets/css/", "/assets/", "/assets/missing",
		"/assets//", "/assets/css//", "/assets/.env", "/assets/.git/config", "/assets/%2eenv", "/assets/css/../.env",
	} {
		out, err := rawExchange(t, s.addr, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.HasPrefix(out, "HTTP/1.1 404 ") && !strings.HasPrefix(out, "HTTP/1.1 400 ") || strings.Contains(out, "secret") {
			t.Errorf("%s: %.80q", path, out)
		}
	}
	// The app still serves everything else.
	if resp, body := staticGet(t, s, "GET", "/assetsx"); resp.StatusCode != 200 || !strings.Contains(body, `"scheme"`) {
		t.Errorf("the app: %d %q", resp.StatusCode, body)
	}
	s.stop()
	for _, line := range []string{`"GET /assets/css/site.css HTTP/1.1" 200 20`, `"GET /assets/css/site.css HTTP/1.1" 304 -`,
		`"GET /assets/css/site.css HTTP/1.1" 206 5`, `"HEAD /assets/css/site.css HTTP/1.1" 200 -`, `"GET /assets/outside.txt HTTP/1.1" 404 10`} {
		if !strings.Contains(s.logs.String(), line) {
			t.Errorf("no access-log line with %s:\n%s", line, s.logs)
		}
	}
}

// TestStaticDotfiles: --static-path-dotfiles serves names starting with a
// dot, which are 404 without it (TestStaticFiles).
func TestStaticDotfiles(t *testing.T) {
	mount := staticTree(t)
	s := startWSGI(t, "proxy_app:app", "--static-path-mount", mount, "--static-path-dotfiles")
	if resp, body := staticGet(t, s, "GET", "/static/.env"); resp.StatusCode != 200 || body != "SECRET_KEY=secret" {
		t.Errorf(".env: %d %q", resp.StatusCode, body)
	}
	if resp, body := staticGet(t, s, "GET", "/static/.git/config"); resp.StatusCode != 200 || body != "[secret]" {
		t.Errorf(".git/config: %d %q", resp.StatusCode, body)
	}
}
