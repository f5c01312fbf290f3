//go:build linux

package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestArenaValidate runs make arena-validate against the binary under
// test: HttpArena's own scripts/validate.sh (arena/validate/httparena,
// unchanged) passes for every entry of arena/, each started by its
// Dockerfile's command (arena/validate/docker stands in for docker).
func TestArenaValidate(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := filepath.Glob(filepath.Join(root, "arena", "m0serve-*"))
	if err != nil || len(entries) < 3 {
		t.Fatalf("arena entries: %v %v", entries, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "arena", "validate", "run.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "M0SERVE="+binary, "HTTPARENA=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("arena/validate/run.sh: %v\n%s", err, out)
	}
	for _, entry := range entries {
		name := filepath.Base(entry)
		if !strings.Contains(string(out), "arena-validate: "+name+": pass") {
			t.Errorf("no pass for %s:\n%s", name, out)
		}
	}
}
