//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"testing"
)

// testVenv is tests/.venv: a venv of the CPython m0serve embeds holding
// today's frameworks and reference servers from PyPI, as pinned with
// hashes in tests/requirements.txt (`make test` makes it). A missing venv
// fails the test rather than skipping it.
func testVenv(t testing.TB) string {
	t.Helper()
	venv, err := filepath.Abs(".venv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(venv, ".installed")); err != nil {
		t.Fatalf("tests/.venv is not installed (make test-venv makes it from tests/requirements.txt): %v", err)
	}
	return venv
}

// venvPython is tests/.venv's interpreter, for what the tests run beside
// m0serve: manage.py, gunicorn, uvicorn, the Python clients.
func venvPython(t testing.TB) string {
	t.Helper()
	return filepath.Join(testVenv(t), "bin", "python")
}

// withVenv is args with --venv tests/.venv in front: a server that
// imports a framework runs on the venv's site-packages.
func withVenv(t testing.TB, args ...string) []string {
	t.Helper()
	return append([]string{"--venv", testVenv(t)}, args...)
}
