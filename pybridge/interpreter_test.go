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

// A venv is taken from Config, else $VIRTUAL_ENV; one that is not there,
// or not a venv for the embedded Python, is refused with where it came
// from and what to do.
func TestVirtualEnv(t *testing.T) {
	venv := t.TempDir()
	site := filepath.Join(venv, "lib", "python"+Version(), "site-packages")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := virtualEnv(Config{VirtualEnv: venv}); err != nil || got != venv {
		t.Errorf("--venv: %q, %v", got, err)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	if got, err := virtualEnv(Config{}); err != nil || got != venv {
		t.Errorf("from VIRTUAL_ENV: %q, %v", got, err)
	}
	other := t.TempDir()
	for _, c := range []struct {
		cfg  Config
		env  string
		want []string
	}{
		{Config{}, filepath.Join(other, "gone"), []string{"VIRTUAL_ENV=" + filepath.Join(other, "gone") + " (from the environment)", "no such directory", "unset VIRTUAL_ENV"}},
		{Config{}, other, []string{"not a virtualenv", "unset VIRTUAL_ENV", "--venv"}},
		{Config{VirtualEnv: other}, venv, []string{"--venv " + other, "not a virtualenv"}},
	} {
		t.Setenv("VIRTUAL_ENV", c.env)
		_, err := virtualEnv(c.cfg)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v VIRTUAL_ENV=%s: %v, want %q in it", c.cfg, c.env, err, w)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(other, "pyvenv.cfg"), []byte("home = /opt/py/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := virtualEnv(Config{VirtualEnv: other})
	if err == nil || !strings.Contains(err.Error(), "another Python than the embedded "+Version()) ||
		!strings.Contains(err.Error(), "/opt/py/bin") {
		t.Errorf("venv for another Python: %v", err)
	}
}

// The embedded Python's home is found from its library, whatever PATH
// holds.
func TestFindHome(t *testing.T) {
	h := findHome()
	if h.prefix == "" {
		t.Fatal("no prefix found from the loaded libpython")
	}
	if _, err := os.Stat(filepath.Join(h.prefix, "lib", "python"+Version(), "os.py")); err != nil {
		t.Errorf("prefix %s: %v", h.prefix, err)
	}
	if _, err := os.Stat(h.executable); err != nil {
		t.Errorf("executable %s: %v", h.executable, err)
	}
	t.Logf("prefix %s, executable %s", h.prefix, h.executable)
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
