//go:build linux

package tests

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rangeTree is a mount with a 1000-byte file (byte i is 'a'+i%26), index
// files at its root and in docs/, and a directory without one.
func rangeTree(t *testing.T) (mount, data string) {
	t.Helper()
	mount = t.TempDir()
	for _, d := range []string{"docs", "empty"} {
		if err := os.Mkdir(filepath.Join(mount, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteByte(byte('a' + i%26))
	}
	data = b.String()
	writeFile(t, filepath.Join(mount, "data.txt"), data)
	writeFile(t, filepath.Join(mount, "index.html"), "<h1>root</h1>")
	writeFile(t, filepath.Join(mount, "docs", "index.html"), "<h1>docs</h1>")
	return mount, data
}

// byteRanges reads a multipart/byteranges body with Go's own parser:
// each part's Content-Range and bytes.
func byteRanges(t *testing.T, resp *http.Response, body string) [][2]string {
	t.Helper()
	kind, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || kind != "multipart/byteranges" || params["boundary"] == "" {
		t.Fatalf("Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
	}
	reader := multipart.NewReader(strings.NewReader(body), params["boundary"])
	var parts [][2]string
	for {
		part, err := reader.NextPart()
		if err == io.EOF {
			return parts
		}
		if err != nil {
			t.Fatalf("part %d: %v\n%q", len(parts), err, body)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			t.Fatal(err)
		}
		if got := part.Header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
			t.Errorf("part %d's Content-Type: %q", len(parts), got)
		}
		parts = append(parts, [2]string{part.Header.Get("Content-Range"), string(data)})
	}
}

// TestStaticMultipleRanges: a Range of several ranges is answered 206
// with multipart/byteranges parts in the client's order (RFC 9110
// §14.6); overlapping or nearly touching ranges are coalesced; too many
// ranges, or ranges adding up to more than the file, get the whole file;
// none satisfiable is 416.
func TestStaticMultipleRanges(t *testing.T) {
	mount, data := rangeTree(t)
	s := startWSGI(t, "proxy_app:app", "--static-path-mount", mount, "--access-log")

	for _, c := range []struct {
		ranges string
		want   [][2]string
	}{
		{"bytes=0-9,500-509", [][2]string{{"bytes 0-9/1000", data[0:10]}, {"bytes 500-509/1000", data[500:510]}}},
		{"bytes=900-,-5, 100-104", [][2]string{{"bytes 900-999/1000", data[900:]}, {"bytes 100-104/1000", data[100:105]}}},
		{"bytes=500-509,0-9", [][2]string{{"bytes 500-509/1000", data[500:510]}, {"bytes 0-9/1000", data[0:10]}}},
		{"bytes=0-9,5000-,300-309", [][2]string{{"bytes 0-9/1000", data[0:10]}, {"bytes 300-309/1000", data[300:310]}}},
	} {
		resp, body := staticGet(t, s, "GET", "/static/data.txt", "Range", c.ranges)
		if resp.StatusCode != 206 {
			t.Errorf("%s: %d %v", c.ranges, resp.StatusCode, resp.Header)
			continue
		}
		parts := byteRanges(t, resp, body)
		if len(parts) != len(c.want) {
			t.Errorf("%s: %d parts %q, want %q", c.ranges, len(parts), parts, c.want)
			continue
		}
		for i := range parts {
			if parts[i] != c.want[i] {
				t.Errorf("%s: part %d %q, want %q", c.ranges, i, parts[i], c.want[i])
			}
		}
	}

	// Coalesced into one: a plain 206.
	for ranges, want := range map[string]string{
		"bytes=0-9,5-19":   "bytes 0-19/1000",
		"bytes=0-9,40-49":  "bytes 0-49/1000",
		"bytes=10-19,0-99": "bytes 10-19/1000", // before its predecessor: not merged, and 10-19 + 0-99 fit the file
	} {
		resp, body := staticGet(t, s, "GET", "/static/data.txt", "Range", ranges)
		if strings.HasPrefix(want, "bytes 10-19") {
			// Kept apart, in order.
			if parts := byteRanges(t, resp, body); resp.StatusCode != 206 || len(parts) != 2 || parts[0][0] != want {
				t.Errorf("%s: %d %q", ranges, resp.StatusCode, parts)
			}
			continue
		}
		if resp.StatusCode != 206 || resp.Header.Get("Content-Range") != want || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s: %d %v", ranges, resp.StatusCode, resp.Header)
		}
	}

	// Abuse: the whole file instead.
	many := "bytes=" + strings.Repeat("0-0,", 32) + "999-999"
	for _, ranges := range []string{many, "bytes=500-999,0-999", "bytes=0-9,x-y"} {
		resp, body := staticGet(t, s, "GET", "/static/data.txt", "Range", ranges)
		if resp.StatusCode != 200 || body != data {
			t.Errorf("%.40s: %d, %d bytes; want 200 and the whole file", ranges, resp.StatusCode, len(body))
		}
	}
	if resp, _ := staticGet(t, s, "GET", "/static/data.txt", "Range", "bytes=5000-,6000-7000"); resp.StatusCode != 416 ||
		resp.Header.Get("Content-Range") != "bytes */1000" {
		t.Errorf("none satisfiable: %d %v", resp.StatusCode, resp.Header)
	}
	// HEAD: the GET's length, no body.
	get, getBody := staticGet(t, s, "GET", "/static/data.txt", "Range", "bytes=0-9,500-509")
	head, headBody := staticGet(t, s, "HEAD", "/static/data.txt", "Range", "bytes=0-9,500-509")
	if head.StatusCode != 206 || headBody != "" || head.ContentLength != int64(len(getBody)) || get.ContentLength != int64(len(getBody)) {
		t.Errorf("HEAD: %d, length %d, body %q; the GET's: %d", head.StatusCode, head.ContentLength, headBody, len(getBody))
	}
	s.stop()
	if !strings.Contains(s.logs.String(), `"GET /static/data.txt HTTP/1.1" 206 `) {
		t.Errorf("no access-log line for a multipart 206:\n%s", s.logs)
	}
}

// TestStaticIndexFiles: a directory's path with its slash serves its
// index.html; without, 301 to the slash form (query kept), as nginx and
// Starlette's StaticFiles(html=True) do; a directory without an index is
// 404, never a listing.
func TestStaticIndexFiles(t *testing.T) {
	mount, _ := rangeTree(t)
	s := startWSGI(t, "proxy_app:app", "--static-path-mount", mount)
	client := &http.Client{Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		method, path string
		status       int
		body         string // or the Location of a 301
	}{
		{"GET", "/static/", 200, "<h1>root</h1>"},
		{"GET", "/static/docs/", 200, "<h1>docs</h1>"},
		{"GET", "/static/docs/index.html", 200, "<h1>docs</h1>"},
		{"HEAD", "/static/docs/", 200, ""},
		{"GET", "/static", 301, "/static/"},
		{"GET", "/static/docs", 301, "/static/docs/"},
		{"GET", "/static/docs?lang=fr", 301, "/static/docs/?lang=fr"},
		{"HEAD", "/static/docs", 301, "/static/docs/"},
		{"GET", "/static/empty", 301, "/static/empty/"},
		{"GET", "/static/empty/", 404, "not found\n"},
		{"GET", "/static/data.txt/", 404, "not found\n"},
		{"GET", "/static/missing/", 404, "not found\n"},
	} {
		req, err := http.NewRequest(c.method, s.url(c.path), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		body := string(readBody(t, resp))
		got := body
		if c.status == 301 {
			got = resp.Header.Get("Location")
		}
		if resp.StatusCode != c.status || got != c.body {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.path, resp.StatusCode, got, c.status, c.body)
		}
		if c.status == 200 && resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, resp.Header.Get("Content-Type"))
		}
	}
}
