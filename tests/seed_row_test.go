//go:build linux

package tests

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The seed's row (issue 38, section 2): tests/seed/row.py, the client
// script make test-seed also runs against the seed's wheel, run here
// against the binary under test: --health-path, --doctor, the seed's
// flag spellings, a bare MODULE, and a view calling its own server under
// two workers of one handler thread each.
func TestSeedRow(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run tests/seed/row.py")
	}
	script, err := filepath.Abs(filepath.Join("seed", "row.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script, "--server", binary, "--impl", "ours")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
}
