//go:build linux

package tests

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWheel builds the sdist and, from it, the wheel for one CPython
// (packaging/build-wheel.sh: Debian's python3, or M0_WHEEL_PYTHON for
// make test-pythons), puts them in a PEP 503 folder with Flask's wheels
// (build/wheel-cache, which make wheel-cache fills) and installs Flask
// from it, offline, into a fresh venv without system site-packages, and
// the distribution m0serve-go from the built folder, as `pip install
// --find-links dist m0serve-go` would: the wheel's metadata says what it
// is and where it comes from. Then through the
// console script and `python -m m0serve`: a WSGI, an ASGI and a Flask
// app serve from the venv, inside the venv's interpreter (its
// /proc/self/exe), with sys.prefix the venv and a module that only the
// venv has; --workers 2 serves from two worker processes that are the
// interpreter too, and again after SIGHUP; SIGTERM drains a request in
// the app and a second SIGTERM exits at once; --reload serves an edited
// app. Another CPython reaching the package, and --venv, stop
// with one line and exit 2; uninstalling leaves the venv as it was. In
// the default run the sdist also installs by itself (Go builds the
// extension in pip's isolated build) and, without Go on PATH, says so
// in one line.
func TestWheel(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	python := os.Getenv("M0_WHEEL_PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	tools := filepath.Join(root, "build", "packaging-venv", "bin", "python")
	cache := filepath.Join(root, "build", "wheel-cache")
	for _, path := range []string{tools, filepath.Join(cache, ".filled")} {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%v: make wheel-tools wheel-cache makes it (make test does)", err)
		}
	}
	version := pythonVersion(t, python)
	interpreter, err := filepath.EvalSymlinks(python)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()

	out := mustRun(t, tmp, append(os.Environ(), "OUTDIR="+filepath.Join(tmp, "dist"), "BUILD_DIR="+filepath.Join(tmp, "build"),
		"TOOLS_PYTHON="+tools), "sh", filepath.Join(root, "packaging", "build-wheel.sh"), python)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sdist, wheel := lines[len(lines)-2], lines[len(lines)-1]
	tag := "cp" + strings.ReplaceAll(version, ".", "")
	release := strings.TrimSpace(string(mustRead(t, filepath.Join(root, "VERSION"))))
	if want := "m0serve_go-" + release + "-" + tag + "-" + tag + "-manylinux_2_17_"; !strings.HasPrefix(filepath.Base(wheel), want) {
		t.Fatalf("wheel %s, want %s<arch>.whl", wheel, want)
	}
	if want := "m0serve_go-" + release + ".tar.gz"; filepath.Base(sdist) != want {
		t.Fatalf("sdist %s, want %s", sdist, want)
	}
	checkWheelMetadata(t, wheel, mustRead(t, filepath.Join(root, "LICENSE")))
	checkWheelGlibc(t, wheel, "2.17")
	index := packageIndex(t, filepath.Join(tmp, "simple"), append(globFiles(t, cache, "*.whl"), wheel, sdist))

	// pip as a user runs it, with no configuration of this machine's.
	pipEnv := append(os.Environ(), "PIP_CONFIG_FILE=/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1")
	venv := filepath.Join(tmp, "venv")
	mustRun(t, tmp, nil, python, "-m", "venv", venv)
	pip := filepath.Join(venv, "bin", "pip")
	mustRun(t, tmp, pipEnv, pip, "install", "--quiet", "--index-url", index, "flask")
	before := listTree(t, venv)
	mustRun(t, tmp, pipEnv, pip, "install", "--quiet", "--no-index", "--find-links", filepath.Dir(wheel), "m0serve-go")
	shown := mustRun(t, tmp, pipEnv, pip, "show", "m0serve-go")
	if !strings.Contains(shown, "Name: m0serve-go\n") || !strings.Contains(shown, "Version: "+release+"\n") ||
		!strings.Contains(shown, "written in Go") {
		t.Errorf("pip show m0serve-go after pip install --find-links: %q; want m0serve-go %s, the server written in Go", shown, release)
	}
	site := filepath.Join(venv, "lib", "python"+version, "site-packages")
	// Only this venv has the marker the test apps import.
	writeFile(t, filepath.Join(site, "wheel_venv_marker.py"), "NAME = 'venv'\n")

	// The environment of a shell where no venv is active.
	var env []string
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "VIRTUAL_ENV=") && !strings.HasPrefix(kv, "PYTHON") {
			env = append(env, kv)
		}
	}
	env = append(env, "WHEEL_PROBE=passed-on")
	apps := filepath.Join(root, "tests", "apps")
	// inVenv checks that an answer came from the venv's interpreter.
	inVenv := func(t *testing.T, a wheelAnswer, kind string) {
		t.Helper()
		if a.Kind != kind || a.Marker != "venv" || a.Probe != "passed-on" || a.Exe != interpreter || a.Prefix != venv {
			t.Errorf("%s: answered %+v; want kind %s, marker venv, probe passed-on, exe %s, prefix %s", kind, a, kind, interpreter, venv)
		}
	}
	launchers := map[string][]string{
		"console-script": {filepath.Join(venv, "bin", "m0serve")},
		"python-m":       {filepath.Join(venv, "bin", "python"), "-m", "m0serve"},
	}
	for name, launcher := range launchers {
		t.Run(name, func(t *testing.T) {
			out := mustRun(t, tmp, env, launcher[0], append(launcher[1:], "--version")...)
			// -V names the interpreter it runs inside (sys.executable) and its GIL.
			if !strings.HasPrefix(out, "m0serve "+release+" ") || !regexp.MustCompile(`, CPython `+regexp.QuoteMeta(version)+
				`\.\S+ in `+regexp.QuoteMeta(filepath.Join(venv, "bin"))+`/python3?, GIL enabled, backends: `).MatchString(out) {
				t.Errorf("--version: %q, want m0serve %s in CPython %s in %s/bin/python, GIL enabled", out, release, version, venv)
			}
			for _, app := range [][]string{{"wsgi", "wheel_app:wsgi_app"}, {"asgi", "wheel_app:asgi_app"}, {"flask", "--factory", "wheel_app:flask_app"}} {
				args := append(append([]string{}, launcher[1:]...), "--host", "127.0.0.1", "--port", "0", "--app-dir", apps)
				s := startProgram(t, env, launcher[0], append(args, app[1:]...)...)
				inVenv(t, getAnswer(t, http.DefaultClient, s.url("/")), app[0])
				s.stop()
			}
		})
	}

	t.Run("workers", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(venv, "bin", "m0serve"), "--host", "127.0.0.1", "--port", "0", "--app-dir", apps,
			"--workers", "2", "wheel_app:wsgi_app")
		cmd.Env = env
		s, ready := startLaunch(t, cmd, "m0serve --workers 2", workersReady, 1)
		ws := s.awaitReady(t, ready, nil)
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ws.master)); err != nil || exe != interpreter {
			t.Errorf("the master's /proc/%d/exe: %q, %v; want %s", ws.master, exe, err, interpreter)
		}
		// New connections until both workers have answered: the kernel
		// spreads them over the two SO_REUSEPORT sockets.
		pids := map[int]bool{}
		client := oneShot()
		for i := 0; i < 400 && len(pids) < 2; i++ {
			a := getAnswer(t, client, ws.url("/"))
			inVenv(t, a, "wsgi")
			if a.Pid == ws.master {
				t.Fatalf("the master (pid %d) answered a request", a.Pid)
			}
			pids[a.Pid] = true
		}
		if len(pids) != 2 {
			t.Errorf("400 connections were answered by %d worker processes, want 2\n%s", len(pids), ws.logs)
		}
		// SIGHUP: the master replaces both workers, again the interpreter.
		ws.signal(t, syscall.SIGHUP)
		ws.waitLog(t, "reload complete", 1, time.Minute)
		a := getAnswer(t, oneShot(), ws.url("/"))
		inVenv(t, a, "wsgi")
		if pids[a.Pid] {
			t.Errorf("after SIGHUP pid %d, a worker from before the reload, answered\n%s", a.Pid, ws.logs)
		}
		ws.stop()
	})

	// slowRequest starts a server with python -m m0serve and a request to
	// /slow, and returns once the request is in the app; release lets it
	// answer.
	slowRequest := func(t *testing.T) (s *server, answer chan error, release func()) {
		dir := t.TempDir()
		started, released := filepath.Join(dir, "started"), filepath.Join(dir, "release")
		s = startProgram(t, append(env, "WHEEL_SLOW_STARTED="+started, "WHEEL_SLOW_RELEASE="+released),
			filepath.Join(venv, "bin", "python"), "-m", "m0serve", "--host", "127.0.0.1", "--port", "0", "--app-dir", apps, "wheel_app:wsgi_app")
		answer = make(chan error, 1)
		go func() {
			code, body, err := fetch(http.DefaultClient, s.url("/slow"))
			if err == nil && (code != 200 || !strings.Contains(body, `"path": "/slow"`)) {
				err = fmt.Errorf("status %d, %q", code, body)
			}
			answer <- err
		}()
		waitFile(t, started)
		return s, answer, func() { writeFile(t, released, "") }
	}

	t.Run("sigterm-drains", func(t *testing.T) {
		s, answer, release := slowRequest(t)
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		s.waitLogLine(t, "draining")
		release()
		select {
		case err := <-answer:
			if err != nil {
				t.Errorf("the request in the app when SIGTERM came: %v; want its answer", err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("the request in the app got no answer after SIGTERM\n%s", s.logs)
		}
		if err := s.waitExit(time.Minute); err != nil {
			t.Errorf("after SIGTERM: %v, want exit 0\n%s", err, s.logs)
		}
	})

	t.Run("second-sigterm-exits", func(t *testing.T) {
		s, answer, release := slowRequest(t)
		defer release()
		for range 2 {
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			s.waitLogLine(t, "draining")
		}
		var exit *exec.ExitError
		if err := s.waitExit(time.Minute); !errors.As(err, &exit) || exit.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("after a second SIGTERM with a request in the app: %v, want exit status %d\n%s", err, 128+int(syscall.SIGTERM), s.logs)
		}
		if err := <-answer; err == nil {
			t.Error("the request in the app was answered, though the second SIGTERM ended the process")
		}
	})

	t.Run("reload", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "reload_app.py"), reloadApp("one"))
		cmd := exec.Command(filepath.Join(venv, "bin", "m0serve"), "--host", "127.0.0.1", "--port", "0", "--app-dir", dir,
			"--reload", "reload_app:app")
		cmd.Env = env
		s, ready := startLaunch(t, cmd, "m0serve --reload", workersReady, 1)
		ws := s.awaitReady(t, ready, nil)
		if got := getBody(t, ws.url("/")); got != "one" {
			t.Fatalf("before the edit: %q, want one", got)
		}
		// Another length: Python's bytecode cache, checked by the source's
		// mtime in seconds and its size, must not serve the old version.
		writeFile(t, filepath.Join(dir, "reload_app.py"), reloadApp("two, edited"))
		deadline := time.Now().Add(time.Minute)
		for got := ""; got != "two, edited"; got = getBody(t, ws.url("/")) {
			if time.Now().After(deadline) {
				t.Fatalf("a minute after the edit the app still answers %q, want %q\n%s", got, "two, edited", ws.logs)
			}
			time.Sleep(100 * time.Millisecond)
		}
		ws.stop()
	})

	t.Run("venv-flag", func(t *testing.T) {
		code, out := runProgram(t, env, filepath.Join(venv, "bin", "m0serve"), "--venv", venv, "wheel_app:wsgi_app")
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "--venv") {
			t.Errorf("--venv inside the interpreter: exit %d, %q; want 2 and one line naming --venv", code, out)
		}
	})

	testWheelRun(t, venv, apps, env, inVenv)

	t.Run("free-threaded", func(t *testing.T) {
		// No free-threaded CPython here: the interpreter is made to say it
		// is one (sysconfig's Py_GIL_DISABLED, what the package reads).
		pretend := "import sysconfig; get = sysconfig.get_config_var; " +
			"sysconfig.get_config_var = lambda name: 1 if name == 'Py_GIL_DISABLED' else get(name); import m0serve"
		code, out := runProgram(t, env, filepath.Join(venv, "bin", "python"), "-c", pretend)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 1 || lines[len(lines)-1] != "ImportError: m0serve does not support the free-threaded CPython build ("+filepath.Join(venv, "bin", "python")+") yet" {
			t.Errorf("import under a free-threaded build: exit %d, %q; want an ImportError in one line", code, out)
		}
	})

	t.Run("other-interpreter", func(t *testing.T) {
		other := otherPython(t, version)
		if other == "" {
			t.Fatal("no CPython 3.10+ of another minor version here (PYENV_ROOT): make test-pythons's pyenv builds")
		}
		// PYTHONDONTWRITEBYTECODE: no .pyc of the other version left in the venv.
		code, out := runProgram(t, append(env, "PYTHONPATH="+site, "PYTHONDONTWRITEBYTECODE=1"), other, "-m", "m0serve", "--version")
		otherVersion := pythonVersion(t, other)
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "-m pip install m0serve-go") ||
			!strings.Contains(out, "cpython-"+strings.ReplaceAll(version, ".", "")) || !strings.Contains(out, "CPython "+otherVersion) {
			t.Errorf("under CPython %s: exit %d, %q; want 2 and one line naming the cpython-%s extension, CPython %s and pip install m0serve-go",
				otherVersion, code, out, strings.ReplaceAll(version, ".", ""), otherVersion)
		}
	})

	if err := os.Remove(filepath.Join(site, "wheel_venv_marker.py")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(site, "__pycache__")) // the marker's, made by the apps' import
	mustRun(t, tmp, pipEnv, pip, "uninstall", "--yes", "--quiet", "m0serve-go")
	if after := listTree(t, venv); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("pip uninstall left the venv changed:\n%s", diffLists(before, after))
	}

	if os.Getenv("M0_WHEEL_PYTHON") != "" {
		return // the sdist's build is the same for every interpreter: once is enough
	}
	t.Run("sdist-without-go", func(t *testing.T) {
		venv := filepath.Join(t.TempDir(), "venv")
		mustRun(t, tmp, nil, python, "-m", "venv", venv)
		noGo := append(withoutPath(pipEnv), "PATH="+filepath.Join(venv, "bin")+":/usr/bin:/bin")
		code, out := runProgram(t, noGo, filepath.Join(venv, "bin", "pip"), "install", "--index-url", index, sdist)
		if code == 0 || !strings.Contains(out, "m0serve: building from source needs Go 1.26 or newer (https://go.dev/dl/) and a C compiler: no `go` on PATH") {
			t.Errorf("pip install of the sdist without Go: exit %d, want a failure naming Go in one line:\n%s", code, out)
		}
	})
	t.Run("sdist", func(t *testing.T) {
		venv := filepath.Join(t.TempDir(), "venv")
		mustRun(t, tmp, nil, python, "-m", "venv", venv)
		mustRun(t, tmp, pipEnv, filepath.Join(venv, "bin", "pip"), "install", "--quiet", "--index-url", index, sdist)
		out := mustRun(t, tmp, env, filepath.Join(venv, "bin", "m0serve"), "--version")
		if !strings.HasPrefix(out, "m0serve "+release+" ") || !strings.Contains(out, "CPython "+version+".") {
			t.Errorf("--version of the sdist's build: %q, want m0serve %s in CPython %s", out, release, version)
		}
		writeFile(t, filepath.Join(venv, "lib", "python"+version, "site-packages", "wheel_venv_marker.py"), "NAME = 'venv'\n")
		s := startProgram(t, env, filepath.Join(venv, "bin", "m0serve"), "--host", "127.0.0.1", "--port", "0", "--app-dir", apps, "wheel_app:asgi_app")
		if a := getAnswer(t, http.DefaultClient, s.url("/")); a.Kind != "asgi" || a.Prefix != venv || a.Exe != interpreter {
			t.Errorf("the sdist's build answered %+v, want asgi from %s in %s", a, venv, interpreter)
		}
		s.stop()
	})
}

// wheelAnswer is what tests/apps/wheel_app.py answers.
type wheelAnswer struct {
	Kind, Marker, Probe, Exe, Prefix, Path string
	Pid                                    int
}

func getAnswer(t *testing.T, client *http.Client, url string) wheelAnswer {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var a wheelAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return a
}

// reloadApp is a WSGI app answering text.
func reloadApp(text string) string {
	return "def app(environ, start_response):\n" +
		"    start_response('200 OK', [('Content-Type', 'text/plain')])\n" +
		"    return [b'" + text + "']\n"
}

// packageIndex makes a PEP 503 "simple" folder at dir holding files
// (wheels and sdists) and returns its file:// URL.
func packageIndex(t *testing.T, dir string, files []string) string {
	t.Helper()
	projects := map[string][]string{}
	for _, file := range files {
		name, _, _ := strings.Cut(filepath.Base(file), "-")
		// PEP 503's normalised name.
		project := strings.ToLower(regexp.MustCompile(`[-_.]+`).ReplaceAllString(name, "-"))
		projects[project] = append(projects[project], file)
	}
	var root strings.Builder
	root.WriteString("<!DOCTYPE html>\n<html><body>\n")
	for project, files := range projects {
		fmt.Fprintf(&root, "<a href=\"%s/\">%s</a>\n", project, project)
		if err := os.MkdirAll(filepath.Join(dir, project), 0o755); err != nil {
			t.Fatal(err)
		}
		var page strings.Builder
		page.WriteString("<!DOCTYPE html>\n<html><body>\n")
		for _, file := range files {
			data := mustRead(t, file)
			base := filepath.Base(file)
			writeFile(t, filepath.Join(dir, project, base), string(data))
			fmt.Fprintf(&page, "<a href=\"%s#sha256=%x\">%s</a>\n", base, sha256.Sum256(data), base)
		}
		page.WriteString("</body></html>\n")
		writeFile(t, filepath.Join(dir, project, "index.html"), page.String())
	}
	root.WriteString("</body></html>\n")
	writeFile(t, filepath.Join(dir, "index.html"), root.String())
	return "file://" + dir
}

func globFiles(t *testing.T, dir, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s in %s (%v)", pattern, dir, err)
	}
	return files
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within a minute", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLogLine waits until a line of the server's log contains text.
func (s *server) waitLogLine(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(s.logs.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log within a minute:\n%s", text, s.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// withoutPath is env without its PATH.
func withoutPath(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return out
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
