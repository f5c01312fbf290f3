//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// stampFlags are the -X flags the Makefile's build stamps into the binary:
// the version from the VERSION file and the short git commit ("unknown"
// outside git), so the binary under test reports what `make build` does.
func stampFlags(root string) (string, error) {
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return "", err
	}
	commit := "unknown"
	git := exec.Command("git", "rev-parse", "--short", "HEAD")
	git.Dir = root
	if out, err := git.Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	return "-X github.com/m0serve/m0serve/cli.version=" + strings.TrimSpace(string(version)) + " -X github.com/m0serve/m0serve/cli.commit=" + commit, nil
}

var versionLine = regexp.MustCompile(`^m0serve (\S+) \(commit (\S+), CPython (\d+\.\d+)\.\d+\S* embedded, GIL enabled, ` +
	`backends: ([a-z_ ]+), ([a-z_]+) in use, (go\S+) (\w+)/(\w+)\)\n$`)

// TestVersion: --version (and -V) names the release, the commit, the
// CPython the binary embeds and that its GIL is enabled, the backends
// built in and the one this machine's auto start takes (the one a
// server started here serves on), and the Go toolchain, on one line.
// Where io_uring_setup is refused (tests/tools/noiouring), it names
// epoll and why.
func TestVersion(t *testing.T) {
	status, out := runToExit(t, cleanEnv(), "--version")
	m := versionLine.FindStringSubmatch(out)
	if status != 0 || m == nil {
		t.Fatalf("--version: status %d, %q; want 0 and m0serve VERSION (commit C, CPython X.Y.Z embedded, GIL enabled, backends: ..., B in use, go...)", status, out)
	}
	version, commit, python, backends, inUse, goVersion, goos, goarch := m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]
	if status, short := runToExit(t, cleanEnv(), "-V"); status != 0 || short != out {
		t.Errorf("-V: status %d, %q; want --version's %q", status, short, out)
	}
	s := start(t, variant{name: "auto"}, "--native", "hello")
	if served := servingLine.FindStringSubmatch(s.logs.String()); served == nil || !strings.HasPrefix(served[2], inUse+")") {
		t.Errorf("--version says %s in use; the server started here serves on %q", inUse, served)
	}
	s.stop()
	refused := exec.Command(noIOURing, binary, "-V")
	refused.Env = cleanEnv()
	if out, err := refused.Output(); err != nil || !regexp.MustCompile(`, backends: io_uring epoll, epoll in use \(io_uring: [^\n]*not permitted[^\n]*\), go`).Match(out) {
		t.Errorf("-V where io_uring_setup is refused: %v, %q; want epoll in use and the reason", err, out)
	}

	file, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(file)); version != want {
		t.Errorf("version %q, want %q from VERSION", version, want)
	}

	git := exec.Command("git", "rev-parse", "HEAD")
	git.Dir = ".."
	if head, err := git.Output(); err != nil {
		if commit != "unknown" {
			t.Errorf("commit %q outside git, want unknown", commit)
		}
	} else if len(commit) < 7 || !strings.HasPrefix(string(head), commit) {
		t.Errorf("commit %q, want a prefix of HEAD %s", commit, head)
	}

	// The embedded CPython is the one pkg-config's python3-embed names.
	embed, err := exec.Command("pkg-config", "--modversion", "python3-embed").Output()
	if err != nil {
		t.Fatalf("pkg-config --modversion python3-embed: %v", err)
	}
	if want := strings.TrimSpace(string(embed)); python != want {
		t.Errorf("CPython %s, want %s (pkg-config python3-embed)", python, want)
	}

	if backends != "io_uring epoll" {
		t.Errorf("backends %q, want io_uring epoll", backends)
	}
	if goVersion != runtime.Version() || goos != runtime.GOOS || goarch != runtime.GOARCH {
		t.Errorf("Go %s %s/%s, want %s %s/%s", goVersion, goos, goarch, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
}
