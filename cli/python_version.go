package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/m0serve/m0serve/pybridge"
)

// checkPythonVersion stops a start under another CPython minor version
// than the one the binary embeds, with one line naming both, before
// anything is imported: the libpython actually loaded (a library swapped
// under the binary), and the virtual environment in use (--venv, else
// $VIRTUAL_ENV), whose packages, compiled extensions included, were
// installed for its own Python. A venv without a readable pyvenv.cfg is
// left to the interpreter's own checks.
func checkPythonVersion(venv string) error {
	embedded := pybridge.Version()
	if loaded := minorVersion(pybridge.LibraryVersion()); loaded != embedded {
		return fmt.Errorf("built for CPython %s but loaded libpython %s: rebuild m0serve for it", embedded, loaded)
	}
	if venv == "" && hostPython == "" {
		// Inside a running interpreter $VIRTUAL_ENV is not used: the
		// environment is that interpreter's.
		venv = os.Getenv("VIRTUAL_ENV")
	}
	if venv == "" {
		return nil
	}
	made, ok := venvVersion(filepath.Join(venv, "pyvenv.cfg"))
	if ok && made != embedded {
		return fmt.Errorf("built for CPython %s but the virtual environment %s is CPython %s: install m0serve into it (%s/bin/python -m pip install m0serve-go, the cp%s wheel) and run its m0serve",
			embedded, venv, made, venv, strings.ReplaceAll(made, ".", ""))
	}
	return nil
}

// venvVersion is the major.minor version in a pyvenv.cfg: venv writes
// "version = 3.11.2" (3.11 and newer also "version_info"), virtualenv
// "version_info = 3.12.1.final.0".
func venvVersion(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, found := strings.Cut(sc.Text(), "=")
		key = strings.TrimSpace(key)
		if found && (key == "version" || key == "version_info") {
			if v := minorVersion(strings.TrimSpace(value)); v != "" {
				return v, true
			}
		}
	}
	return "", false
}

// minorVersion cuts "3.11.2" (or "3.12.1.final.0") to "3.11"; "" when
// the text is not a version.
func minorVersion(full string) string {
	major, rest, ok := strings.Cut(full, ".")
	if !ok || major == "" {
		return ""
	}
	minor, _, _ := strings.Cut(rest, ".")
	if minor == "" || strings.Trim(major+minor, "0123456789") != "" {
		return ""
	}
	return major + "." + minor
}
