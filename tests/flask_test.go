//go:build linux

package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFlask drives a real Flask app (Flask 3, tests/.venv), under the
// validator, through the binary.
func TestFlask(t *testing.T) {
	s := startWSGI(t, "flask_app:app", withVenv(t, "--max-body-size", "64M")...)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: noRedirects}

	t.Run("routes", func(t *testing.T) {
		for path, want := range map[string]string{"/": "Hello from Flask", "/user/ada": "user ada", "/user/caf%C3%A9": "user café"} {
			resp, body := httpGet(t, client, s.url(path))
			if resp.StatusCode != 200 || body != want {
				t.Errorf("%s: %d %q, want %q", path, resp.StatusCode, body, want)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		resp, err := client.Post(s.url("/json"), "application/json", strings.NewReader(`{"numbers": [1, 2, 3], "name": "m0"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Received map[string]any `json:"received"`
			Doubled  []int          `json:"doubled"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%v, Content-Type %q", err, resp.Header.Get("Content-Type"))
		}
		if fmt.Sprint(got.Doubled) != "[2 4 6]" || got.Received["name"] != "m0" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("form post", func(t *testing.T) {
		resp, err := client.PostForm(s.url("/form"), url.Values{"name": {"Zoë & co"}, "tag": {"a", "b"}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != `{"name":"Zo\u00eb & co","tags":["a","b"]}`+"\n" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("10MB multipart upload", func(t *testing.T) {
		data := make([]byte, 10<<20)
		rand.Read(data)
		sum := sha256.Sum256(data)
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("note", "ten megabytes")
		fw, _ := mw.CreateFormFile("file", "blob.bin")
		fw.Write(data)
		mw.Close()
		resp, err := client.Post(s.url("/upload"), mw.FormDataContentType(), &buf)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Filename, Sha256, Note string
			Size                   int
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.Size != len(data) || got.Sha256 != hex.EncodeToString(sum[:]) || got.Filename != "blob.bin" || got.Note != "ten megabytes" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("cookies and session", func(t *testing.T) {
		resp, _ := httpGet(t, client, s.url("/cookie/set"))
		if len(resp.Cookies()) != 2 {
			t.Fatalf("Set-Cookie fields: %q", resp.Header.Values("Set-Cookie"))
		}
		_, body := httpGet(t, client, s.url("/cookie/get"))
		if body != `{"colour":"blue","flavour":"oatmeal"}`+"\n" {
			t.Fatalf("cookies read back: %s", body)
		}
		for want := 1; want <= 3; want++ {
			_, body := httpGet(t, client, s.url("/session"))
			if body != fmt.Sprintf(`{"n":%d}`+"\n", want) {
				t.Fatalf("session visit %d: %s", want, body)
			}
		}
	})
	t.Run("streaming generator", func(t *testing.T) {
		resp, body := httpGet(t, client, s.url("/stream?who=m0"))
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if resp.StatusCode != 200 || len(resp.TransferEncoding) != 1 || len(lines) != 100 || lines[99] != "line 99 of m0" {
			t.Fatalf("%d %v, %d lines, last %q", resp.StatusCode, resp.TransferEncoding, len(lines), lines[len(lines)-1])
		}
	})
	t.Run("abort 404", func(t *testing.T) {
		resp, body := httpGet(t, client, s.url("/missing"))
		if resp.StatusCode != 404 || !strings.Contains(body, "Not Found") {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
		resp, _ = httpGet(t, client, s.url("/no/such/route"))
		if resp.StatusCode != 404 {
			t.Fatalf("unrouted: %d", resp.StatusCode)
		}
	})
	checkValidatorLog(t, s)
}

// TestFlaskLeak: 50k requests to a Flask app, after 5k to warm it (Flask's
// caches, the job pool and arenas at their working size), must grow the
// server's RSS by less than 16 MiB. Measured here: a clean run grows by
// under 1 MiB; the same app keeping a reference to each request's environ
// (a refcount leak of one environ per request) grew by 57 MiB (1.2 KiB a
// request), 3.5 times the bound; leaking Flask's request context too
// would be more.
func TestFlaskLeak(t *testing.T) {
	s := startWSGI(t, "flask_app:app", withVenv(t)...)
	const warm, measured, conns = 5000, 50000, 8
	hammer := func(n int) {
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for c := 0; c < conns; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}
				defer client.CloseIdleConnections()
				for i := 0; i < n/conns; i++ {
					resp, err := client.Get(s.url("/user/leak"))
					if err != nil {
						errs <- err
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errs <- fmt.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	hammer(warm)
	before := processRSS(t, s.cmd.Process.Pid)
	hammer(measured)
	after := processRSS(t, s.cmd.Process.Pid)
	t.Logf("RSS %d KiB after %d warm-up requests, %d KiB after %d more (%+d KiB)", before>>10, warm, after>>10, measured, (after-before)>>10)
	if after-before >= 16<<20 {
		t.Fatalf("RSS grew by %d KiB over %d requests: a leak", (after-before)>>10, measured)
	}
	checkValidatorLog(t, s)
}
