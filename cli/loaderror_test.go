package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/pybridge"
	"github.com/m0serve/m0serve/server"
)

const frozenTraceback = `Traceback (most recent call last):
  File "<frozen importlib._bootstrap>", line 1178, in _find_and_load
  File "<frozen importlib._bootstrap_external>", line 940, in exec_module
    some source
    ^^^^^^^^^^^
  File "/srv/app/main.py", line 1, in <module>
    import flaskzzz
ModuleNotFoundError: No module named 'flaskzzz'`

func TestWithoutFrozenFrames(t *testing.T) {
	want := `Traceback (most recent call last):
  File "/srv/app/main.py", line 1, in <module>
    import flaskzzz
ModuleNotFoundError: No module named 'flaskzzz'`
	if got := withoutFrozenFrames(frozenTraceback); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	only := "Traceback (most recent call last):\n  File \"<frozen importlib._bootstrap>\", line 1178, in _find_and_load\nModuleNotFoundError: No module named 'x'"
	if got := withoutFrozenFrames(only); got != "ModuleNotFoundError: No module named 'x'" {
		t.Errorf("only frozen frames: %q", got)
	}
}

func TestLoadErrorText(t *testing.T) {
	cfg := server.Defaults
	cfg.AppDir = "/srv/app"
	own := &pybridge.LoadError{Target: "pkg.main:app", Python: frozenTraceback, Missing: "pkg"}
	got := strings.Join(loadErrorText(own, &cfg, false), "\n")
	if got != `cannot load the application pkg.main:app: Could not import module "pkg.main" (not in /srv/app nor on the embedded Python's sys.path; --app-dir DIR to look elsewhere).` {
		t.Errorf("the app's module: %q", got)
	}
	if got := strings.Join(loadErrorText(own, &cfg, true), "\n"); !strings.Contains(got, "\n"+frozenTraceback) {
		t.Errorf("debug: %q", got)
	}
	dep := &pybridge.LoadError{Target: "main:app", Python: frozenTraceback, Missing: "flaskzzz"}
	lines := loadErrorText(dep, &cfg, false)
	got = strings.Join(lines, "\n")
	if strings.Contains(got, "frozen") || !strings.Contains(got, "import flaskzzz\n") ||
		len(lines) != 2 || !strings.HasPrefix(lines[1], "the Python m0serve embeds is CPython "+pybridge.LibraryVersion()) ||
		!strings.Contains(got, "--venv .venv") {
		t.Errorf("a dependency: %q", got)
	}
	cfg.Venv = "/srv/venv"
	if got := strings.Join(loadErrorText(dep, &cfg, false), "\n"); !strings.Contains(got, `importing from the venv /srv/venv: install what provides "flaskzzz" there`) {
		t.Errorf("a dependency, with --venv: %q", got)
	}
	other := &pybridge.LoadError{Target: "main:app", Python: "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 1, in <module>\nZeroDivisionError: division by zero"}
	if got := strings.Join(loadErrorText(other, &cfg, false), "\n"); got != "cannot load the application main:app:\n"+other.Python {
		t.Errorf("another error: %q", got)
	}
}

// Under the wheel the hint names the interpreter serving and its
// sys.prefix, and the installer that environment has; never --venv,
// which the wheel refuses.
func TestLoadErrorTextHosted(t *testing.T) {
	defer func(python, prefix string) { hostPython, hostPrefix = python, prefix }(hostPython, hostPrefix)
	venv := t.TempDir()
	hostPython, hostPrefix = venv+"/bin/python", venv
	cfg := server.Defaults
	dep := &pybridge.LoadError{Target: "main:app", Python: frozenTraceback, Missing: "flaskzzz"}
	got := strings.Join(loadErrorText(dep, &cfg, false), "\n")
	want := "m0serve runs in " + venv + "/bin/python (CPython " + pybridge.LibraryVersion() + ", sys.prefix " + venv +
		`): install what provides "flaskzzz" there (uv pip install --python ` + venv + "/bin/python ..., or " + venv + "/bin/python -m ensurepip first)."
	if !strings.HasSuffix(got, "\n"+want) || strings.Contains(got, "--venv") {
		t.Errorf("a venv without pip: %q", got)
	}
	if err := os.MkdirAll(venv+"/lib/python3.12/site-packages/pip", 0o755); err != nil {
		t.Fatal(err)
	}
	got = strings.Join(loadErrorText(dep, &cfg, false), "\n")
	if !strings.Contains(got, `install what provides "flaskzzz" there (`+venv+"/bin/python -m pip install ...).") {
		t.Errorf("a venv with pip: %q", got)
	}
	own := &pybridge.LoadError{Target: "pkg.main:app", Python: frozenTraceback, Missing: "pkg"}
	if got := strings.Join(loadErrorText(own, &cfg, false), "\n"); !strings.Contains(got, "nor on "+venv+"/bin/python's sys.path") {
		t.Errorf("the app's module: %q", got)
	}
}
