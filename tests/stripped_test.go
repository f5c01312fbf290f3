//go:build linux

package tests

import (
	"debug/elf"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestStrippedBinary: the binary is built as make build ships it,
// without DWARF or a symbol table (-s -w), and still a Go traceback (here
// SIGQUIT's dump of every goroutine) names each function with its file
// and line, from the runtime's own tables. TestPythonLink runs C
// extension modules on the same binary: their libpython symbols are in
// the dynamic table, which stripping keeps.
func TestStrippedBinary(t *testing.T) {
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".debug_info", ".symtab"} {
		if f.Section(name) != nil {
			t.Errorf("the binary has %s", name)
		}
	}
	if syms, err := f.DynamicSymbols(); err != nil || len(syms) == 0 {
		t.Errorf("no dynamic symbols (%v): extension modules would not find libpython's", err)
	}
	f.Close()

	s := start(t, variant{name: "epoll", env: []string{"M0_BACKEND=epoll"}}, "--native", "hello")
	s.done = true // it exits with Go's status for SIGQUIT, not 0
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.exit:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("no exit after SIGQUIT\n%s", s.logs)
	}
	frame := regexp.MustCompile(`(?m)^github\.com/m0serve/m0serve/[a-z0-9/]+\.[^\n]+\(.*\)\n\t/\S+/[a-z0-9_]+\.go:\d+`)
	if !frame.MatchString(s.logs.String()) {
		t.Errorf("no named Go frame with file and line in the dump:\n%s", s.logs)
	}
}
