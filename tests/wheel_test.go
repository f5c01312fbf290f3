//go:build linux

package tests

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestWheel installs the m0serve wheel with pip into a virtual environment
// made with --system-site-packages and runs it from the venv's bin/, as a
// user who ran `pip install m0serve` would: --version, a WSGI, an ASGI and
// a Flask app through the console script and through `python -m m0serve`,
// with neither --venv nor VIRTUAL_ENV; a venv or interpreter of another
// minor version stops it with one line and exit 2; uninstalling leaves the
// venv as it was. The wheel is built for /usr/bin/python3 around the binary
// under test; M0_WHEEL_PYTHON names another CPython (make test-pythons),
// for which build-wheel.sh builds the binary itself.
func TestWheel(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	python, prebuilt := os.Getenv("M0_WHEEL_PYTHON"), ""
	if python == "" {
		python, prebuilt = "/usr/bin/python3", binary
	}
	version := pythonVersion(t, python)
	tmp := t.TempDir()

	build := []string{filepath.Join(root, "packaging", "build-wheel.sh"), python}
	if prebuilt != "" {
		build = append(build, prebuilt)
	}
	out := mustRun(t, tmp, append(os.Environ(), "OUTDIR="+filepath.Join(tmp, "dist"), "BUILD_DIR="+filepath.Join(tmp, "build")), "sh", build...)
	wheel := lastLine(out)
	tag := "cp" + strings.ReplaceAll(version, ".", "")
	release := strings.TrimSpace(string(mustRead(t, filepath.Join(root, "VERSION"))))
	if want := "m0serve-" + release + "-" + tag + "-" + tag + "-linux_"; !strings.HasPrefix(filepath.Base(wheel), want) {
		t.Fatalf("wheel %s, want %s<arch>.whl", wheel, want)
	}

	venv := filepath.Join(tmp, "venv")
	mustRun(t, tmp, nil, python, "-m", "venv", "--system-site-packages", venv)
	site := filepath.Join(venv, "lib", "python"+version, "site-packages")
	before := listTree(t, venv)
	mustRun(t, tmp, nil, filepath.Join(venv, "bin", "pip"), "install", "--no-index", "--quiet", wheel)
	// Only this venv has the marker the test apps import.
	if err := os.WriteFile(filepath.Join(site, "wheel_venv_marker.py"), []byte("NAME = 'venv'\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The environment of a shell where no venv is active.
	var env []string
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "VIRTUAL_ENV=") && !strings.HasPrefix(kv, "PYTHON") {
			env = append(env, kv)
		}
	}
	env = append(env, "WHEEL_PROBE=passed-on")
	hasFlask := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import flask").Run() == nil
	if python == "/usr/bin/python3" && !hasFlask {
		t.Fatal("Debian's python3-flask is not importable in the venv (make test installs it)")
	}
	launchers := map[string][]string{
		"console-script": {filepath.Join(venv, "bin", "m0serve")},
		"python-m":       {filepath.Join(venv, "bin", "python"), "-m", "m0serve"},
	}
	for name, launcher := range launchers {
		t.Run(name, func(t *testing.T) {
			out := mustRun(t, tmp, env, launcher[0], append(launcher[1:], "--version")...)
			if !strings.HasPrefix(out, "m0serve "+release+" ") || !strings.Contains(out, "CPython "+version+".") {
				t.Errorf("--version: %q, want m0serve %s embedding CPython %s", out, release, version)
			}
			apps := [][]string{{"wsgi", "wheel_app:wsgi_app"}, {"asgi", "wheel_app:asgi_app"}}
			if hasFlask {
				apps = append(apps, []string{"flask", "--factory", "wheel_app:flask_app"})
			}
			for _, app := range apps {
				args := append(append([]string{}, launcher[1:]...), "--host", "127.0.0.1", "--port", "0", "--app-dir", filepath.Join(root, "tests", "apps"))
				s := startProgram(t, env, launcher[0], append(args, app[1:]...)...)
				want := app[0] + " venv passed-on"
				if got := getBody(t, s.url("/")); got != want {
					t.Errorf("%s: GET / = %q, want %q\n%s", app[0], got, want, s.logs)
				}
				s.stop()
			}
		})
	}

	t.Run("other-venv", func(t *testing.T) {
		other := filepath.Join(tmp, "venv-3.99")
		if err := os.MkdirAll(other, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, "pyvenv.cfg"), []byte("home = /opt/python/bin\nversion = 3.99.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := runProgram(t, env, filepath.Join(venv, "bin", "m0serve"), "--venv", other, "wheel_app:wsgi_app")
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 ||
			!strings.Contains(out, "CPython "+version) || !strings.Contains(out, "CPython 3.99") {
			t.Errorf("a venv of CPython 3.99: exit %d, %q; want 2 and one line naming CPython %s and 3.99", code, out, version)
		}
	})

	t.Run("other-interpreter", func(t *testing.T) {
		other := otherPython(t, version)
		if other == "" {
			t.Skip("no CPython of another minor version here (PYENV_ROOT)")
		}
		// PYTHONDONTWRITEBYTECODE: no .pyc of the other version left in the venv.
		code, out := runProgram(t, append(env, "PYTHONPATH="+site, "PYTHONDONTWRITEBYTECODE=1"), other, "-m", "m0serve", "--version")
		otherVersion := pythonVersion(t, other)
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 ||
			!strings.Contains(out, "CPython "+version) || !strings.Contains(out, "CPython "+otherVersion) {
			t.Errorf("under CPython %s: exit %d, %q; want 2 and one line naming CPython %s and %s", otherVersion, code, out, version, otherVersion)
		}
	})

	if err := os.Remove(filepath.Join(site, "wheel_venv_marker.py")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(site, "__pycache__")) // the marker's, made by the apps' import
	mustRun(t, tmp, nil, filepath.Join(venv, "bin", "pip"), "uninstall", "--yes", "--quiet", "m0serve")
	if after := listTree(t, venv); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("pip uninstall left the venv changed:\n%s", diffLists(before, after))
	}
}

// startProgram runs a command that starts m0serve (a launcher) and waits
// for m0serve's start line, as start does for the binary itself.
func startProgram(t *testing.T, env []string, name string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	s, m := launch(t, cmd, name, servingLine, 1)
	s.addr = m[1]
	return s
}

// mustRun runs a command to completion in dir (env nil: the test's own)
// and returns its standard output; failing, it fails the test.
func mustRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return string(data)
}

// pythonVersion is an interpreter's major.minor version.
func pythonVersion(t *testing.T, python string) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, "", nil, python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"))
}

// otherPython is a CPython 3.10+ of another minor version than version
// among pyenv's builds, or "".
func otherPython(t *testing.T, version string) string {
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		root = "/root/.pyenv"
	}
	candidates, _ := filepath.Glob(filepath.Join(root, "versions", "3.1*", "bin", "python3"))
	for _, python := range candidates {
		if v := pythonVersion(t, python); v != version {
			return python
		}
	}
	return ""
}

// listTree lists every path under dir, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	return paths
}

// diffLists names the paths only one of two sorted lists has.
func diffLists(before, after []string) string {
	seen := map[string]int{}
	for _, p := range before {
		seen[p]--
	}
	for _, p := range after {
		seen[p]++
	}
	var lines []string
	for p, n := range seen {
		switch {
		case n < 0:
			lines = append(lines, "removed: "+p)
		case n > 0:
			lines = append(lines, "added: "+p)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestChangelogVersion: the newest release CHANGELOG.md names is the
// VERSION file's, the one --version and the wheel carry.
func TestChangelogVersion(t *testing.T) {
	release := strings.TrimSpace(string(mustRead(t, filepath.Join("..", "VERSION"))))
	for _, line := range strings.Split(string(mustRead(t, filepath.Join("..", "CHANGELOG.md"))), "\n") {
		if heading, ok := strings.CutPrefix(line, "## "); ok {
			if got, _, _ := strings.Cut(heading, " "); got != release {
				t.Errorf("CHANGELOG.md's newest release is %q, VERSION says %s", got, release)
			}
			return
		}
	}
	t.Error("CHANGELOG.md names no release (## <version>)")
}
