//go:build linux

package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// postJSON posts body and decodes a JSON answer into out; it returns the
// status.
func postJSON(t *testing.T, url, contentType string, body io.Reader, out any) int {
	t.Helper()
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Post(url, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("POST %s: %d %q: %v", url, resp.StatusCode, data, err)
	}
	return resp.StatusCode
}

// TestStarlette: a Starlette app through m0serve on io_uring and epoll:
// routes, JSON, a 10 MB upload read whole and streamed (byte-exact),
// form data, a StreamingResponse, a background task, a FileResponse and
// lifespan state seen in a handler.
func TestStarlette(t *testing.T) {
	upload := make([]byte, 10<<20)
	if _, err := rand.Read(upload); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(upload)
	uploadSum := hex.EncodeToString(sum[:])
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := startASGI(t, v, "asgi_starlette_app:app", withVenv(t)...)
		if resp, body := get(t, s.url("/")); resp.StatusCode != 200 || body != "starlette says hi" {
			t.Fatalf("GET /: %d %q", resp.StatusCode, body)
		}
		resp, body := get(t, s.url("/items/42?q=pear%20tart"))
		if resp.Header.Get("Content-Type") != "application/json" || body != `{"id":42,"q":"pear tart"}` {
			t.Fatalf("GET /items/42: %q %q", resp.Header.Get("Content-Type"), body)
		}
		if resp, _ := get(t, s.url("/items/nope")); resp.StatusCode != 404 {
			t.Fatalf("GET /items/nope: %d", resp.StatusCode)
		}
		if _, body := get(t, s.url("/state")); body != `{"greeting":"hello from lifespan"}` {
			t.Fatalf("lifespan state: %q", body)
		}

		var whole struct {
			Length int    `json:"length"`
			SHA256 string `json:"sha256"`
		}
		if status := postJSON(t, s.url("/body"), "application/octet-stream", bytes.NewReader(upload), &whole); status != 200 || whole.Length != len(upload) || whole.SHA256 != uploadSum {
			t.Fatalf("request.body(): %d %+v", status, whole)
		}
		var streamed struct {
			Length  int    `json:"length"`
			SHA256  string `json:"sha256"`
			Pieces  int    `json:"pieces"`
			Largest int    `json:"largest"`
		}
		// Chunked (no Content-Length) this time: a reader without Len.
		if status := postJSON(t, s.url("/stream"), "application/octet-stream", io.MultiReader(bytes.NewReader(upload)), &streamed); status != 200 || streamed.Length != len(upload) || streamed.SHA256 != uploadSum {
			t.Fatalf("request.stream(): %d %+v", status, streamed)
		}
		// Streamed in pieces of at most 64 KiB: never buffered whole.
		if streamed.Pieces < len(upload)/(64<<10) || streamed.Largest > 64<<10 {
			t.Fatalf("request.stream() came in %d pieces, largest %d", streamed.Pieces, streamed.Largest)
		}

		var fields map[string]any
		form := url.Values{"name": {"Ada Lovelace"}, "lang": {"en & fr"}}
		if status := postJSON(t, s.url("/form"), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()), &fields); status != 200 || fields["name"] != "Ada Lovelace" || fields["lang"] != "en & fr" {
			t.Fatalf("urlencoded form: %d %v", status, fields)
		}
		var mp bytes.Buffer
		w := multipart.NewWriter(&mp)
		w.WriteField("title", "notes")
		fw, _ := w.CreateFormFile("attachment", "notes.txt")
		fw.Write([]byte("file body\n"))
		w.Close()
		if status := postJSON(t, s.url("/form"), w.FormDataContentType(), &mp, &fields); status != 200 || fields["title"] != "notes" ||
			fields["attachment"].(map[string]any)["filename"] != "notes.txt" || fields["attachment"].(map[string]any)["content"] != "file body\n" {
			t.Fatalf("multipart form: %d %v", status, fields)
		}

		resp, body = get(t, s.url("/streaming"))
		if len(resp.TransferEncoding) == 0 || body != "part 0\npart 1\npart 2\npart 3\npart 4\n" {
			t.Fatalf("StreamingResponse: %v %q", resp.TransferEncoding, body)
		}
		if _, body := get(t, s.url("/background?name=bg")); body != "queued" {
			t.Fatalf("background: %q", body)
		}
		s.waitFile(t, "bg", "background ran")

		source, err := os.ReadFile(filepath.Join(appsDir(t), "asgi_starlette_app.py"))
		if err != nil {
			t.Fatal(err)
		}
		resp, body = get(t, s.url("/file"))
		if resp.StatusCode != 200 || body != string(source) || resp.ContentLength != int64(len(source)) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/x-python") {
			t.Fatalf("FileResponse: %d length %d type %q, body equal %v", resp.StatusCode, resp.ContentLength, resp.Header.Get("Content-Type"), body == string(source))
		}
		checkNoTraceback(t, s.server)
		s.waitFile(t, "shutdown", "shutdown;")
	})
}

// TestFastAPI: a pydantic model POST, the 422 for a bad one, a
// dependency reading lifespan state, the OpenAPI document.
func TestFastAPI(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "asgi_fastapi_app:app", withVenv(t)...)
	var order map[string]any
	if status := postJSON(t, s.url("/orders"), "application/json", strings.NewReader(`{"fruit":"pear","quantity":3}`), &order); status != 200 ||
		order["fruit"] != "pear" || order["quantity"] != 3.0 || order["total"] != 6.0 {
		t.Fatalf("POST /orders: %d %v", status, order)
	}
	var invalid struct {
		Detail []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	if status := postJSON(t, s.url("/orders"), "application/json", strings.NewReader(`{"fruit":"pear","quantity":"many"}`), &invalid); status != 422 ||
		len(invalid.Detail) != 1 || len(invalid.Detail[0].Loc) != 2 || invalid.Detail[0].Loc[1] != "quantity" {
		t.Fatalf("invalid order: %d %+v", status, invalid)
	}
	if _, body := get(t, s.url("/prices/apple")); body != `{"fruit":"apple","price":1.5}` {
		t.Fatalf("dependency on lifespan state: %q", body)
	}
	resp, body := get(t, s.url("/openapi.json"))
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Info    struct{ Title string }    `json:"info"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("openapi.json: %d %v", resp.StatusCode, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") || doc.Info.Title != "m0serve e2e" || doc.Paths["/orders"]["post"] == nil || doc.Paths["/prices/{fruit}"]["get"] == nil {
		t.Fatalf("openapi.json: %s", body)
	}
	checkNoTraceback(t, s.server)
}

// TestDjangoASGI: Django's ASGI handler (djsite.asgi) serves the admin's
// login page and redirects to it.
func TestDjangoASGI(t *testing.T) {
	project := filepath.Join(appsDir(t), "django_project")
	dbEnv := "DJSITE_DB=" + filepath.Join(t.TempDir(), "db.sqlite3")
	s := start(t, wsgiVariant(dbEnv), withVenv(t, "--app-dir", project, "djsite.asgi:application")...)
	if !strings.Contains(s.logs.String(), "ASGI app djsite.asgi:application") {
		t.Fatalf("not served as ASGI:\n%s", s.logs)
	}
	resp, body := get(t, s.url("/admin/login/"))
	if resp.StatusCode != 200 || !strings.Contains(body, "Django administration") || !csrfField.MatchString(body) {
		t.Fatalf("login page: %d\n%.400s", resp.StatusCode, body)
	}
	if !strings.Contains(resp.Header.Get("Set-Cookie"), "csrftoken=") {
		t.Fatalf("no CSRF cookie: %v", resp.Header)
	}
	resp, _ = get(t, s.url("/admin/"))
	if resp.StatusCode != 302 || !strings.HasPrefix(resp.Header.Get("Location"), "/admin/login/") {
		t.Fatalf("GET /admin/: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	checkNoTraceback(t, s)
}
