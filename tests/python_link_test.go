package tests

import (
	"debug/elf"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binary embeds CPython as the build's pkg-config answered:
// statically where it named the Python's archive (make's default,
// PYTHON_LINK=static, where the Python's build left one), else through
// its shared library. Either way the interpreter's C extension modules,
// which are not linked against libpython, find its symbols.
func TestPythonLink(t *testing.T) {
	out, err := exec.Command("sh", "../pybridge/pkg-config.sh", "--libs", "python3-embed").Output()
	if err != nil {
		t.Fatalf("pkg-config.sh --libs python3-embed: %v", err)
	}
	static := slices.ContainsFunc(strings.Fields(string(out)), func(flag string) bool {
		return strings.HasSuffix(flag, ".a")
	})
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libraries, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	loadsLibpython := false
	for _, l := range libraries {
		loadsLibpython = loadsLibpython || strings.HasPrefix(l, "libpython")
	}
	if static == loadsLibpython {
		t.Errorf("pkg-config answered %q, yet the binary loads %q", out, libraries)
	}

	s := startWSGI(t, "extensions_app:app")
	if _, body := get(t, s.url("/")); body != "3.3 x 4 ab Future" {
		t.Errorf("body %q\n%s", body, s.logs)
	}
}
