//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"testing"
)

// testVenv is tests/.venv: a venv of the CPython m0serve embeds holding
// today's frameworks and reference servers from PyPI, as pinned with
// hashes in tests/requirements.txt (`make test` makes it). M0_TEST_VENV
// names another, made the same way by the Python the binary is built
// against (`make test-pythons`). A missing venv fails the test rather
// than skipping it.
func testVenv(t testing.TB) string {
	t.Helper()
	venv, err := filepath.Abs(".venv")
	if other := os.Getenv("M0_TEST_VENV"); other != "" {
		venv, err = filepath.Abs(other)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(venv, ".installed")); err != nil {
		t.Fatalf("%s is not installed (make test-venv makes tests/.venv from tests/requirements.txt; make test-pythons the others): %v", venv, err)
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
