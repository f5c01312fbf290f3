//go:build linux

package tests

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// The examples users copy (examples/), each served by the binary under
// test and asked its real routes; examples_deploy_test.go puts nginx and
// systemd's socket activation in front of them. Frameworks come from
// Debian's python3-* packages (make test installs them).

// exampleDir is examples/NAME, absolute.
func exampleDir(t testing.TB, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// exampleEnv keeps the examples' folders free of __pycache__.
var exampleEnv = "PYTHONDONTWRITEBYTECODE=1"

// requirePythonModules fails (never skips) when the embedded Python
// cannot import one of modules: make test installs them.
func requirePythonModules(t *testing.T, modules ...string) {
	t.Helper()
	out, err := exec.Command(systemPython, "-c", "import "+strings.Join(modules, ", ")).CombinedOutput()
	if err != nil {
		t.Fatalf("%s cannot import %v (make test installs them): %v\n%s", systemPython, modules, err, out)
	}
}

// getJSON GETs url and decodes its JSON body into a map, wanting status.
func getJSON(t *testing.T, client *http.Client, req *http.Request, status int) map[string]any {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	var got map[string]any
	if resp.StatusCode != status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &got) != nil {
		t.Fatalf("%s %s: %d %s %q, want %d and JSON", req.Method, req.URL, resp.StatusCode, resp.Header.Get("Content-Type"), body, status)
	}
	return got
}

func newRequest(t *testing.T, method, url string, body []byte, contentType string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// TestExampleFlask: examples/flask/app.py's routes: text, JSON in and
// out, the JSON 404 and 400, a multipart upload, the client it sees.
func TestExampleFlask(t *testing.T) {
	requirePythonModules(t, "flask")
	s := start(t, wsgiVariant(exampleEnv), "--app-dir", exampleDir(t, "flask"), "--threads", "2", "app:app")
	client := &http.Client{Timeout: 30 * time.Second}

	resp, body := httpGet(t, client, s.url("/"))
	if resp.StatusCode != 200 || body != "Hello from Flask on m0serve!\n" {
		t.Fatalf("GET /: %d %q", resp.StatusCode, body)
	}
	if got := getJSON(t, client, newRequest(t, "GET", s.url("/items/1"), nil, ""), 200); got["name"] != "teapot" {
		t.Errorf("GET /items/1: %v", got)
	}
	if got := getJSON(t, client, newRequest(t, "GET", s.url("/items/99"), nil, ""), 404); got["error"] != "not found" {
		t.Errorf("GET /items/99: %v", got)
	}
	got := getJSON(t, client, newRequest(t, "POST", s.url("/items"), []byte(`{"name": "kettle"}`), "application/json"), 201)
	if got["name"] != "kettle" || got["id"] != 2.0 {
		t.Errorf("POST /items: %v", got)
	}
	if got := getJSON(t, client, newRequest(t, "GET", s.url("/items/2"), nil, ""), 200); got["name"] != "kettle" {
		t.Errorf("GET /items/2 after the POST: %v", got)
	}
	getJSON(t, client, newRequest(t, "POST", s.url("/items"), []byte(`[1]`), "application/json"), 400)

	// A 600 KiB upload: past Werkzeug's 500 KiB in-memory limit, so the
	// multipart parser spools it to a temporary file.
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	part, _ := w.CreateFormFile("file", "report.bin")
	part.Write(bytes.Repeat([]byte("m0"), 300<<10))
	w.Close()
	got = getJSON(t, client, newRequest(t, "POST", s.url("/upload"), form.Bytes(), w.FormDataContentType()), 200)
	if got["filename"] != "report.bin" || got["size"] != float64(600<<10) {
		t.Errorf("POST /upload: %v", got)
	}
	if got := getJSON(t, client, newRequest(t, "GET", s.url("/whoami"), nil, ""), 200); got["client"] != "127.0.0.1" || got["scheme"] != "http" {
		t.Errorf("GET /whoami: %v", got)
	}
	s.stop()
	if logs := s.logs.String(); strings.Contains(logs, "Traceback") {
		t.Errorf("server log shows a traceback:\n%s", logs)
	}
}

// TestExampleDjango: examples/django migrated into a fresh database with
// a superuser and its static files collected, then served over WSGI (the
// view, the project's and the admin's static files through WhiteNoise,
// an admin login) and over Django's ASGI handler (the view).
func TestExampleDjango(t *testing.T) {
	requirePythonModules(t, "django", "whitenoise")
	project := exampleDir(t, "django")
	tmp := t.TempDir()
	env := []string{exampleEnv, "DJANGO_DB=" + filepath.Join(tmp, "db.sqlite3"), "DJANGO_STATIC_ROOT=" + filepath.Join(tmp, "static")}
	manage := func(extra []string, args ...string) {
		t.Helper()
		cmd := exec.Command(systemPython, append([]string{"manage.py"}, args...)...)
		cmd.Dir = project
		cmd.Env = append(append(cleanEnv(), env...), extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("manage.py %v: %v\n%s", args, err, out)
		}
	}
	manage(nil, "migrate", "--noinput", "-v0")
	manage([]string{"DJANGO_SUPERUSER_PASSWORD=" + djangoPassword}, "createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com")
	manage(nil, "collectstatic", "--noinput", "-v0")
	css, err := os.ReadFile(filepath.Join(project, "static", "site.css"))
	if err != nil {
		t.Fatal(err)
	}

	s := start(t, wsgiVariant(env...), "--app-dir", project, "mysite.wsgi:application")
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: noRedirects}
	resp, page := httpGet(t, client, s.url("/"))
	if resp.StatusCode != 200 || !strings.Contains(page, "<h1>Hello from Django ") || !strings.Contains(page, `href="/static/site.css"`) {
		t.Fatalf("GET /: %d\n%s", resp.StatusCode, page)
	}
	resp, body := httpGet(t, client, s.url("/static/site.css"))
	if resp.StatusCode != 200 || body != string(css) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("GET /static/site.css: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp, _ := httpGet(t, client, s.url("/static/admin/css/base.css")); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("GET /static/admin/css/base.css: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	resp, page = httpGet(t, client, s.url("/admin/login/?next=/admin/"))
	token := csrfField.FindStringSubmatch(page)
	if resp.StatusCode != 200 || token == nil || !strings.Contains(page, `href="/static/admin/css/base.css"`) {
		t.Fatalf("login page: %d\n%s", resp.StatusCode, page)
	}
	form := url.Values{"csrfmiddlewaretoken": {token[1]}, "username": {"admin"}, "password": {djangoPassword}, "next": {"/admin/"}}
	resp, err = client.PostForm(s.url("/admin/login/?next=/admin/"), form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/admin/" {
		t.Fatalf("login POST: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, page := httpGet(t, client, s.url("/admin/")); resp.StatusCode != 200 || !strings.Contains(page, "Site administration") {
		t.Fatalf("admin index after login: %d\n%s", resp.StatusCode, page)
	}
	checkValidatorLog(t, s)

	a := start(t, wsgiVariant(env...), "--app-dir", project, "mysite.asgi:application")
	if resp, page := httpGet(t, client, a.url("/")); resp.StatusCode != 200 || !strings.Contains(page, "<h1>Hello from Django ") {
		t.Fatalf("ASGI GET /: %d\n%s", resp.StatusCode, page)
	}
	if resp, body := httpGet(t, client, a.url("/static/site.css")); resp.StatusCode != 200 || body != string(css) {
		t.Errorf("ASGI GET /static/site.css: %d %q", resp.StatusCode, body)
	}
}

// TestExampleFastAPI: examples/fastapi with its static folder mounted:
// the page, its script (from m0serve, not the app), the JSON routes,
// and the chat between two WebSocket clients.
func TestExampleFastAPI(t *testing.T) {
	requirePythonModules(t, "fastapi")
	dir := exampleDir(t, "fastapi")
	s := start(t, wsgiVariant(exampleEnv), "--app-dir", dir, "--static-path-mount", filepath.Join(dir, "static"), "--access-log", "main:app")
	client := &http.Client{Timeout: 30 * time.Second}
	checkChatSite(t, client, "http://"+s.addr, "")
	if got := getJSON(t, client, newRequest(t, "GET", s.url("/api/whoami"), nil, ""), 200); got["client"] != "127.0.0.1" || got["scheme"] != "http" {
		t.Errorf("GET /api/whoami: %v", got)
	}
	checkChat(t, "ws://"+s.addr)
	// The room forgets a member once its handler has seen the close,
	// which may be after the client has its answer.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := getJSON(t, client, newRequest(t, "GET", s.url("/api/health"), nil, ""), 200)
		if got["members"] == 0.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("members after both left: %v", got)
		}
	}
}

// checkChatSite GETs the chat page and its script from base and checks
// both; the script must come from whoServes's Server field when given.
func checkChatSite(t *testing.T, client *http.Client, base, whoServes string) {
	t.Helper()
	resp, page := httpGet(t, client, base+"/")
	if resp.StatusCode != 200 || !strings.Contains(page, `<script src="/static/chat.js"></script>`) {
		t.Fatalf("GET /: %d\n%s", resp.StatusCode, page)
	}
	want, err := os.ReadFile(filepath.Join(exampleDir(t, "fastapi"), "static", "chat.js"))
	if err != nil {
		t.Fatal(err)
	}
	resp, script := httpGet(t, client, base+"/static/chat.js")
	if resp.StatusCode != 200 || script != string(want) || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
		t.Fatalf("GET /static/chat.js: %d %s, %d bytes of %d", resp.StatusCode, resp.Header.Get("Content-Type"), len(script), len(want))
	}
	if whoServes != "" && !strings.HasPrefix(resp.Header.Get("Server"), whoServes) {
		t.Errorf("GET /static/chat.js: Server %q, want %s", resp.Header.Get("Server"), whoServes)
	}
	if got := getJSON(t, client, newRequest(t, "GET", base+"/api/health", nil, ""), 200); got["status"] != "ok" {
		t.Errorf("GET /api/health: %v", got)
	}
}

// chatMessage is what examples/fastapi's chat sends: an event or a line.
type chatMessage struct {
	Event   string `json:"event"`
	Name    string `json:"name"`
	Members int    `json:"members"`
	From    string `json:"from"`
	Text    string `json:"text"`
}

// checkChat: alice joins the chat at base (ws://host:port), then bob;
// each sees the joins, both get what alice says, and alice sees bob
// leave.
func checkChat(t *testing.T, base string) {
	t.Helper()
	dial := func(name string) *websocket.Conn {
		c, resp, err := websocket.DefaultDialer.Dial(base+"/ws?name="+name, nil)
		if err != nil {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Fatalf("%s joining: %v (status %d)", name, err, status)
		}
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c
	}
	expect := func(c *websocket.Conn, who string, want chatMessage) {
		t.Helper()
		var got chatMessage
		if err := c.ReadJSON(&got); err != nil || got != want {
			t.Fatalf("%s got %+v (%v), want %+v", who, got, err, want)
		}
	}
	alice := dial("alice")
	expect(alice, "alice", chatMessage{Event: "join", Name: "alice", Members: 1})
	bob := dial("bob")
	expect(alice, "alice", chatMessage{Event: "join", Name: "bob", Members: 2})
	expect(bob, "bob", chatMessage{Event: "join", Name: "bob", Members: 2})
	if err := alice.WriteMessage(websocket.TextMessage, []byte("hello, bob")); err != nil {
		t.Fatal(err)
	}
	expect(alice, "alice", chatMessage{From: "alice", Text: "hello, bob"})
	expect(bob, "bob", chatMessage{From: "alice", Text: "hello, bob"})
	bob.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"))
	expect(alice, "alice", chatMessage{Event: "leave", Name: "bob", Members: 1})
	alice.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"))
	if _, _, err := alice.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("alice's close: %v, want the server's 1000", err)
	}
}
