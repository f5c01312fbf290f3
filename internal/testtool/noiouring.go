// Package testtool builds the helper programs tests run, so that each test
// package does not carry its own copy of the build step.
package testtool

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildNoIOURing builds tests/tools/noiouring (run a command with
// io_uring_setup refused by seccomp) into a temporary folder and returns
// its path.
func BuildNoIOURing(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to build noiouring: %v", err)
	}
	path := filepath.Join(t.TempDir(), "noiouring")
	build := exec.Command(goTool, "build", "-ldflags=-checklinkname=0", "-o", path,
		"github.com/m0serve/m0serve/tests/tools/noiouring")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build noiouring: %v\n%s", err, out)
	}
	return path
}
