//go:build linux

package tests

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// django is the committed `django-admin startproject djsite` fixture
// (tests/apps/django_project), migrated into a fresh sqlite database with
// a superuser, served by m0serve.
type django struct {
	server *server
	dbEnv  string
}

const djangoPassword = "m0serve-test-password"

func startDjango(t *testing.T) *django {
	t.Helper()
	project := filepath.Join(appsDir(t), "django_project")
	dbEnv := "DJSITE_DB=" + filepath.Join(t.TempDir(), "db.sqlite3")
	manage := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command(venvPython(t), append([]string{"manage.py"}, args...)...)
		cmd.Dir = project
		cmd.Env = append(append(cleanEnv(), dbEnv, "PYTHONDONTWRITEBYTECODE=1"), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("manage.py %v: %v\n%s", args, err, out)
		}
	}
	manage(nil, "migrate", "--noinput", "-v0")
	manage([]string{"DJANGO_SUPERUSER_PASSWORD=" + djangoPassword},
		"createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com")
	s := start(t, wsgiVariant(dbEnv), withVenv(t, "--app-dir", project, "--access-log", "djsite.wsgi:application")...)
	return &django{server: s, dbEnv: dbEnv}
}

var csrfField = regexp.MustCompile(`name="csrfmiddlewaretoken" value="([^"]+)"`)

// TestDjango: the admin's login page renders, a login POST carrying the
// CSRF cookie and token works (and one without is refused), redirects
// and the production 404 page come through, all under the validator.
func TestDjango(t *testing.T) {
	d := startDjango(t)
	s := d.server
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: noRedirects}

	resp, _ := httpGet(t, client, s.url("/"))
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/admin/" {
		t.Fatalf("GET /: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = httpGet(t, client, s.url("/admin/"))
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/admin/login/?next=/admin/" {
		t.Fatalf("GET /admin/ logged out: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	resp, page := httpGet(t, client, s.url("/admin/login/?next=/admin/"))
	if resp.StatusCode != 200 || !strings.Contains(page, "<title>Log in | Django site admin</title>") {
		t.Fatalf("login page: %d\n%s", resp.StatusCode, page)
	}
	token := csrfField.FindStringSubmatch(page)
	if token == nil {
		t.Fatalf("no CSRF token in the login form:\n%s", page)
	}
	base, _ := url.Parse(s.url("/"))
	hasCookie := func(name string) bool {
		for _, c := range jar.Cookies(base) {
			if c.Name == name {
				return true
			}
		}
		return false
	}
	if !hasCookie("csrftoken") {
		t.Fatalf("no csrftoken cookie; Set-Cookie %q", resp.Header.Values("Set-Cookie"))
	}

	// Without the token: refused.
	bare := &http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirects}
	resp, err := bare.PostForm(s.url("/admin/login/"), url.Values{"username": {"admin"}, "password": {djangoPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("login POST without CSRF: %d, want 403", resp.StatusCode)
	}

	form := url.Values{
		"csrfmiddlewaretoken": {token[1]},
		"username":            {"admin"},
		"password":            {djangoPassword},
		"next":                {"/admin/"},
	}
	resp, err = client.PostForm(s.url("/admin/login/?next=/admin/"), form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/admin/" || !hasCookie("sessionid") {
		t.Fatalf("login POST: %d Location %q Set-Cookie %q", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Values("Set-Cookie"))
	}
	resp, page = httpGet(t, client, s.url("/admin/"))
	if resp.StatusCode != 200 || !strings.Contains(page, "Site administration") || !strings.Contains(page, "admin") {
		t.Fatalf("admin index after login: %d\n%s", resp.StatusCode, page)
	}

	resp, page = httpGet(t, client, s.url("/no/such/page/"))
	if resp.StatusCode != 404 || !strings.Contains(page, "<h1>Not Found</h1>") {
		t.Fatalf("404 page: %d\n%s", resp.StatusCode, page)
	}
	checkValidatorLog(t, s)
}

// TestBrowser: headless Chromium (Debian chromium) loads the Django admin
// login page through m0serve; the DOM it rendered has the page's title
// and login form.
func TestBrowser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	requireCommand(t, chromium)
	d := startDjango(t)
	s := d.server
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--dump-dom", s.url("/admin/login/"))
	cmd.Env = append(cleanEnv(), "HOME="+profile)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"<title>Log in | Django site admin</title>",
		`<form action="/admin/login/" method="post" id="login-form">`,
		`name="username"`,
		`name="password"`,
		`name="csrfmiddlewaretoken"`,
	} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("rendered DOM lacks %s:\n%s", want, dom)
		}
	}
	s.stop()
	if !strings.Contains(s.logs.String(), `"GET /admin/login/ HTTP/1.1" 200`) {
		t.Fatalf("the server's access log shows no browser request:\n%s", s.logs)
	}
	os.RemoveAll(profile)
}
