//go:build linux

package tests

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTFBVerify runs make tfb-verify's checker against the binary under
// test: every variant of tfb/benchmark_config.json passes TechEmpower's
// plaintext and json rules (the checker's own tests show each rule
// failing a server that breaks it).
func TestTFBVerify(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "-ldflags=-checklinkname=0", "./tfb/verify", "-binary", binary)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tfb/verify: %v\n%s", err, out)
	}
	for _, variant := range []string{"default", "asgi", "native"} {
		if !strings.Contains(string(out), "tfb-verify: "+variant+": pass") {
			t.Errorf("no pass for %s:\n%s", variant, out)
		}
	}
}
