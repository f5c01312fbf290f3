package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/pybridge"
)

func TestMinorVersion(t *testing.T) {
	for full, want := range map[string]string{
		"3.11.2":         "3.11",
		"3.12.1.final.0": "3.12",
		"3.13":           "3.13",
		"3":              "",
		"":               "",
		"three.eleven.2": "",
		"3.11rc1":        "",
		"3.10.13+":       "3.10",
	} {
		if got := minorVersion(full); got != want {
			t.Errorf("minorVersion(%q) = %q, want %q", full, got, want)
		}
	}
}

func TestCheckPythonVersion(t *testing.T) {
	other := "3.99"
	if pybridge.Version() == other {
		t.Fatal("pick another version")
	}
	for name, cfg := range map[string]string{
		"venv":       "home = /usr/bin\nversion = " + pybridge.Version() + ".7\n",
		"virtualenv": "home = /usr/bin\nversion_info = " + pybridge.Version() + ".1.final.0\n",
		"other":      "home = /opt/python/bin\nversion = " + other + ".0\n",
		"garbled":    "version = soon\n",
	} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pyvenv.cfg"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		err := checkPythonVersion(dir)
		if name != "other" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "CPython "+pybridge.Version()) ||
			!strings.Contains(err.Error(), "CPython "+other) || strings.Contains(err.Error(), "\n") {
			t.Errorf("other: got %v, want one line naming CPython %s and CPython %s", err, pybridge.Version(), other)
		}
	}
	t.Setenv("VIRTUAL_ENV", t.TempDir()) // no pyvenv.cfg: left to pybridge
	if err := checkPythonVersion(""); err != nil {
		t.Errorf("venv without pyvenv.cfg: %v", err)
	}
}
