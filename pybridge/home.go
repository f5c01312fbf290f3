package pybridge

/*
#include "shim.h"
*/
import "C"

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// home is where the embedded Python lives: its prefix (the standard
// library, lib-dynload) and the interpreter program that belongs to it.
// Both are found from the libpython this process loaded, which is the
// one the binary was built against (the system's, or the one its rpath
// names), or, linked statically, from the prefix compiled in; never from
// PATH: CPython left to itself looks for "python3" on PATH and takes the
// standard library of whatever it finds there (a pyenv 3.11.7 under
// Debian's libpython 3.11.2, without Debian's dist-packages).
type home struct {
	prefix     string // "" when not found: CPython's own search
	executable string
}

// findHome walks up from the library's directory to the first one that
// holds lib/pythonX.Y/os.py, CPython's own landmark for its prefix
// (/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 gives /usr). A static
// link's prefix must hold it itself.
func findHome() home {
	if prefix := C.m0_static_prefix(); prefix != nil {
		h, _ := homeAt(C.GoString(prefix))
		return h
	}
	lib := C.m0_library_path()
	if lib == nil {
		return home{}
	}
	path, err := filepath.EvalSymlinks(C.GoString(lib))
	if err != nil {
		return home{}
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if h, ok := homeAt(dir); ok {
			return h
		}
		if dir == filepath.Dir(dir) {
			return home{}
		}
	}
}

// homeAt is the home whose prefix is dir, if dir holds the landmark.
func homeAt(dir string) (home, bool) {
	version := "python" + Version()
	for _, libdir := range []string{"lib", "lib64"} {
		if isFile(filepath.Join(dir, libdir, version, "os.py")) {
			h := home{prefix: dir, executable: filepath.Join(dir, "bin", version)}
			if !isFile(h.executable) && isFile(filepath.Join(dir, "bin", "python3")) {
				h.executable = filepath.Join(dir, "bin", "python3")
			}
			return h, true
		}
	}
	return home{}, false
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// virtualEnv is the venv to run in: cfg.VirtualEnv, else $VIRTUAL_ENV;
// "" for none. It must be a venv made for the embedded Python: its
// pyvenv.cfg and its lib/pythonX.Y/site-packages exist. The error says
// where the path came from and how to choose another, since a stale
// $VIRTUAL_ENV (a shell that activated a venv since deleted) is the
// usual cause.
func virtualEnv(cfg Config) (string, error) {
	venv, source := cfg.VirtualEnv, "--venv "+cfg.VirtualEnv
	if venv == "" {
		venv = os.Getenv("VIRTUAL_ENV")
		source = "VIRTUAL_ENV=" + venv + " (from the environment)"
	}
	if venv == "" {
		return "", nil
	}
	fail := func(format string, args ...any) (string, error) {
		fix := "pass --venv with the right one"
		if cfg.VirtualEnv == "" {
			fix = "unset VIRTUAL_ENV (or deactivate), or pass --venv DIR"
		}
		return "", fmt.Errorf("pybridge: %s: %s; %s", source, fmt.Sprintf(format, args...), fix)
	}
	abs, err := filepath.Abs(venv)
	if err != nil {
		return fail("%v", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fail("no such directory")
	}
	cfgFile := filepath.Join(abs, "pyvenv.cfg")
	if !isFile(cfgFile) {
		return fail("not a virtualenv (no %s)", cfgFile)
	}
	site := filepath.Join(abs, "lib", "python"+Version(), "site-packages")
	if st, err := os.Stat(site); err != nil || !st.IsDir() {
		return fail("it has no %s: made for another Python than the embedded %s (%s)?",
			site, Version(), venvHome(cfgFile))
	}
	return abs, nil
}

// venvHome names the Python a venv was made by, from its pyvenv.cfg.
func venvHome(cfgFile string) string {
	f, err := os.Open(cfgFile)
	if err != nil {
		return "its pyvenv.cfg is unreadable"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(strings.ToLower(key)) == "home" {
			return "it was made by the Python in " + strings.TrimSpace(value)
		}
	}
	return "its pyvenv.cfg names no home"
}

// Embedded names the Python this binary runs: its interpreter program
// (sys.executable outside a venv) and its prefix, for a user who must
// make a venv with it; empty where they were not found.
func Embedded() (executable, prefix string) {
	h := findHome()
	return h.executable, h.prefix
}
