package supervisor

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The master links no event loop, no protocol and no CPython: what it
// shares with its workers is internal/workerproto's encoding, not a
// worker package's types cast onto shared memory.
func TestMasterLinksNoWorkerPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"/loop", "/http1", "/http2", "/tlsrec", "/ws", "/pybridge", "/server"} {
			if strings.HasPrefix(pkg, "github.com/m0serve/m0serve"+banned) {
				t.Errorf("the master links %s", pkg)
			}
		}
	}
}
