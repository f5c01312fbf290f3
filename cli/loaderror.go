package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/m0serve/m0serve/pybridge"
	"github.com/m0serve/m0serve/server"
)

// loadErrorText is what m0serve says when the app does not import, in
// uvicorn's few lines: its own module not found is one line, as
// uvicorn's `Could not import module "x".`; a module it imports not
// found is the traceback and where such a package must be installed (the
// Python m0serve embeds is not necessarily the python3 on PATH: pyenv,
// conda); anything else the traceback. importlib's frozen frames, which
// say nothing about the app, are left out unless --log-level is debug
// or trace, where the whole traceback follows the one line too.
//
// Each string is a line of the log (the first with the traceback under
// it).
func loadErrorText(e *pybridge.LoadError, cfg *server.Config, debug bool) []string {
	traceback := e.Python
	if !debug {
		traceback = withoutFrozenFrames(traceback)
	}
	module, _, _ := strings.Cut(e.Target, ":")
	if e.Missing != "" && (e.Missing == module || strings.HasPrefix(module, e.Missing+".")) {
		dir := cfg.AppDir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		python := "the embedded Python"
		if hostPython != "" {
			python = hostPython
		}
		line := fmt.Sprintf("cannot load the application %s: Could not import module %q (not in %s nor on %s's sys.path; --app-dir DIR to look elsewhere).",
			e.Target, module, dir, python)
		if debug {
			line += "\n" + traceback
		}
		return []string{line}
	}
	text := []string{fmt.Sprintf("cannot load the application %s:\n%s", e.Target, traceback)}
	if e.Missing != "" {
		text = append(text, whereToInstall(e.Missing, cfg.Venv))
	}
	return text
}

// whereToInstall says which Python m0serve embeds and where a missing
// package must go for it.
func whereToInstall(missing, venv string) string {
	if hostPython != "" {
		return hostedInstallHint(missing, hostPython, hostPrefix)
	}
	if venv == "" {
		venv = os.Getenv("VIRTUAL_ENV") // pybridge.Config.VirtualEnv's default
	}
	executable, prefix := pybridge.Embedded()
	python := fmt.Sprintf("CPython %s", pybridge.LibraryVersion())
	if executable != "" {
		python += fmt.Sprintf(" (%s, sys.prefix %s)", executable, prefix)
	} else {
		executable = "python" + pybridge.Version()
	}
	if venv != "" {
		return fmt.Sprintf("the Python m0serve embeds is %s, importing from the venv %s: install what provides %q there (%s/bin/pip install ...).",
			python, venv, missing, venv)
	}
	return fmt.Sprintf("the Python m0serve embeds is %s, not necessarily the python3 %q was installed for (pyenv, conda): "+
		"make a venv with it (%s -m venv .venv), install the app's packages there and give --venv .venv (or activate it).",
		python, missing, executable)
}

// hostedInstallHint is whereToInstall under the wheel: m0serve runs in
// the interpreter that imported it, so the package goes in that
// interpreter's environment (--venv is refused there), with the installer
// that environment has: pip if it is in it, else uv's (uv's venvs have no
// pip).
func hostedInstallHint(missing, python, prefix string) string {
	install := python + " -m pip install ..."
	if pips, _ := filepath.Glob(filepath.Join(prefix, "lib", "python3*", "site-packages", "pip")); len(pips) == 0 {
		install = "uv pip install --python " + python + " ..., or " + python + " -m ensurepip first"
	}
	return fmt.Sprintf("m0serve runs in %s (CPython %s, sys.prefix %s): install what provides %q there (%s).",
		python, pybridge.LibraryVersion(), prefix, missing, install)
}

// withoutFrozenFrames drops importlib's frames ("<frozen
// importlib._bootstrap>") from a traceback, and the header of one left
// with no frame.
func withoutFrozenFrames(traceback string) string {
	lines := strings.Split(traceback, "\n")
	kept := lines[:0]
	skipping := false
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, `  File "<frozen importlib.`):
			skipping = true
			continue
		case skipping && strings.HasPrefix(line, "    "):
			continue // the frame's source line and carets, where shown
		}
		skipping = false
		kept = append(kept, line)
	}
	out := kept[:0]
	for i, line := range kept {
		if line == "Traceback (most recent call last):" && (i+1 == len(kept) || !strings.HasPrefix(kept[i+1], "  ")) {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
