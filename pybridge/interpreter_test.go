package pybridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Site directories are added with their .pth files; the app directory
// comes first on sys.path.
func TestSitePackagesAndAppDir(t *testing.T) {
	j := get(t, "m0_site_probe:app", "/")
	abs, _ := filepath.Abs("testdata")
	if got, want := string(j.Response.Body()), "['"+abs+"']"; got != want {
		t.Errorf("sys.path[:1] = %s, want %s", got, want)
	}
	if j := get(t, "m0_pth_probe:app", "/"); string(j.Response.Body()) != "pth" {
		t.Errorf(".pth path not added: %d %q", j.Response.Status(), j.Response.Body())
	}
}

func TestVirtualEnvSiteDir(t *testing.T) {
	venv := t.TempDir()
	site := filepath.Join(venv, "lib", "python"+Version(), "site-packages")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	dirs, err := siteDirs(Config{VirtualEnv: venv, SitePackages: []string{"/x"}})
	if err != nil || len(dirs) != 2 || dirs[0] != site || dirs[1] != "/x" {
		t.Errorf("dirs %q, err %v", dirs, err)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	if dirs, err := siteDirs(Config{}); err != nil || len(dirs) != 1 || dirs[0] != site {
		t.Errorf("from VIRTUAL_ENV: dirs %q, err %v", dirs, err)
	}
	other := t.TempDir()
	_, err = siteDirs(Config{VirtualEnv: other})
	if err == nil || !strings.Contains(err.Error(), "another Python than the embedded "+Version()) {
		t.Errorf("venv for another Python: %v", err)
	}
}

func TestStartOnlyOnce(t *testing.T) {
	if _, err := Start(Config{}); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Errorf("second Start: %v", err)
	}
}

func TestCloseRefusedWhileHandlersRun(t *testing.T) {
	if err := interp.Close(); err == nil || !strings.Contains(err.Error(), "handler groups still running") {
		t.Errorf("Close with handlers running: %v", err)
	}
}
