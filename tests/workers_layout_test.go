//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWorkersReloadRefusesAnotherBinary: the binary is replaced on disk by
// one whose heartbeat file the master cannot read, then SIGHUP. The new
// worker is refused with one line that says to restart the master, the
// reload aborts and the old worker keeps serving (issue 29 item 8: the
// master took the new worker's word and misread its heartbeat).
func TestWorkersReloadRefusesAnotherBinary(t *testing.T) {
	dir := workersAppDir(t, "v1")
	exe := filepath.Join(t.TempDir(), "m0serve")
	image, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, image, 0o755); err != nil {
		t.Fatal(err)
	}
	s, starting := launchWorkersBinary(t, exe, dir, "workers_app:app", nil, "--workers", "1")
	ws := s.awaitReady(t, starting, nil)
	waitVersion(t, ws, "v1")
	old := ws.readyPids()[0]

	// Another binary: it says ready on its control socket (descriptor 4)
	// without writing a heartbeat layout, as the m0serve binaries from
	// before the layout was versioned do. Renamed over the file the
	// master runs, as a package upgrade does.
	other := exe + ".new"
	writeFile(t, other, "#!/bin/sh\necho backend other >&4\necho ready >&4\nexec sleep 60\n")
	if err := os.Chmod(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, exe); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "version.txt"), "v2")
	ws.signal(t, syscall.SIGHUP)
	ws.waitLog(t, `refused: its heartbeat file has no layout version .*restart the master`, 1, 30*time.Second)
	ws.waitLog(t, `reload aborted, the old workers keep serving`, 1, 30*time.Second)
	waitVersion(t, ws, "v1")
	if pid := ws.readyPids()[0]; pid != old || !alive(old) {
		t.Fatalf("slot 0 is served by pid %d, want the old worker %d\n%s", pid, old, ws.logs)
	}
	ws.signal(t, syscall.SIGTERM)
	if err := ws.waitExit(30 * time.Second); err != nil {
		t.Fatalf("master: %v\n%s", err, ws.logs)
	}
}
