//go:build linux

package tests

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDjangoCollectstatic: Django's collectstatic output served by
// --static-path-mount at STATIC_URL beside the app: the admin login page
// the app renders links stylesheets the server itself sends.
func TestDjangoCollectstatic(t *testing.T) {
	project := filepath.Join(appsDir(t), "django_project")
	root := filepath.Join(t.TempDir(), "collected")
	env := []string{"DJSITE_DB=" + filepath.Join(t.TempDir(), "db.sqlite3"), "DJSITE_STATIC_ROOT=" + root}
	collect := exec.Command(venvPython(t), "manage.py", "collectstatic", "--noinput", "-v0")
	collect.Dir = project
	collect.Env = append(append(cleanEnv(), env...), "PYTHONDONTWRITEBYTECODE=1")
	if out, err := collect.CombinedOutput(); err != nil {
		t.Fatalf("collectstatic: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(root, "admin", "css", "base.css"))
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, wsgiVariant(env...), withVenv(t, "--app-dir", project, "--static-path-mount", root, "--static-path-route", "/static",
		"djsite.wsgi:application")...)
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirects}
	_, page := httpGet(t, client, s.url("/admin/login/"))
	if !strings.Contains(page, `href="/static/admin/css/base.css"`) {
		t.Fatalf("the login page links no /static/admin/css/base.css:\n%.400s", page)
	}
	resp, body := httpGet(t, client, s.url("/static/admin/css/base.css"))
	if resp.StatusCode != 200 || body != string(want) || resp.Header.Get("Content-Type") != "text/css; charset=utf-8" || resp.Header.Get("ETag") == "" {
		t.Errorf("base.css: %d %s, %d bytes of %d", resp.StatusCode, resp.Header.Get("Content-Type"), len(body), len(want))
	}
	if resp, _ := httpGet(t, client, s.url("/static/admin/js/nav_sidebar.js")); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("nav_sidebar.js: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
