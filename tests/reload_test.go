//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitVersion waits for /version to answer want.
func waitVersion(t *testing.T, s *workersServer, want string) {
	t.Helper()
	client := oneShot()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body, err := fetch(client, s.url("/version"))
		if err == nil && status == 200 && body == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/version: %d %q %v, want %q\n%s", status, body, err, want, s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReload: an edit to the app's source replaces the worker; a broken
// edit prints its traceback and the last good worker keeps serving until
// the file is fixed; a file the globs leave out changes nothing.
func TestReload(t *testing.T) {
	dir := workersAppDir(t, "v1")
	source := filepath.Join(dir, "workers_app.py")
	good, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	s := startWorkers(t, dir, nil, "--reload")
	waitVersion(t, s, "v1")

	writeFile(t, filepath.Join(dir, "version.txt"), "v2")
	writeFile(t, filepath.Join(dir, "notes.txt"), "not a source")
	writeFile(t, source, string(good)+"\n# edited\n")
	waitVersion(t, s, "v2")

	writeFile(t, filepath.Join(dir, "version.txt"), "v3")
	writeFile(t, source, string(good)+"\ndef broken(:\n")
	s.waitLog(t, `SyntaxError`, 1, 30*time.Second)
	s.waitLog(t, `reload aborted, the old workers keep serving`, 1, 30*time.Second)
	waitVersion(t, s, "v2")

	writeFile(t, source, string(good))
	waitVersion(t, s, "v3")
	// Edits to files outside the globs started no reload.
	if n := strings.Count(s.logs.String(), "changed: reloading"); n != 3 {
		t.Errorf("%d reloads, want 3 (one per edit of the source)\n%s", n, s.logs)
	}
}

// TestReloadBrokenAtStart: with --reload, an app that does not import at
// start prints its traceback and the master waits, serving nothing and
// not exiting (SIGHUP tries again); the fix boots it, as uvicorn --reload
// does.
func TestReloadBrokenAtStart(t *testing.T) {
	dir := workersAppDir(t, "v1")
	source := filepath.Join(dir, "workers_app.py")
	good, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, source, string(good)+"\ndef broken(:\n")
	s, ready := launchWorkersApp(t, dir, "workers_app:app", nil, "--reload")
	waiting := &workersServer{server: s}
	waiting.waitLog(t, `SyntaxError`, 1, 30*time.Second)
	waiting.waitLog(t, `waiting for a change to the sources`, 1, 30*time.Second)
	select {
	case err := <-s.exit:
		s.done = true
		t.Fatalf("m0serve exited with a broken app under --reload: %v\n%s", err, s.logs)
	default:
	}
	// SIGHUP boots again (still broken: a second traceback, still waiting).
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waiting.waitLog(t, `hangup: booting again`, 1, 30*time.Second)
	waiting.waitLog(t, `waiting for a change to the sources`, 2, 30*time.Second)

	writeFile(t, source, string(good))
	w := s.awaitReady(t, ready, nil)
	waitVersion(t, w, "v1")
	if n := strings.Count(s.logs.String(), "rolling reload"); n != 0 {
		t.Errorf("%d rolling reloads after the fix, want none (the fix boots the first worker)\n%s", n, s.logs)
	}
}
