package cli

import (
	"fmt"

	"github.com/m0serve/m0serve/pybridge"
)

// hostPython is the interpreter m0serve runs inside (sys.executable) and
// hostPrefix its sys.prefix, set by Hosted; "" in the binary that embeds
// CPython.
var hostPython, hostPrefix string

// Hosted makes Main run inside the Python interpreter that imported the
// extension module, whose sys.executable is python and sys.prefix
// prefix: the bridge adopts
// that interpreter instead of starting one, and a master (--workers,
// --reload) starts each worker as `python -m m0serve` with the master's
// arguments, so every worker is that interpreter in the same environment
// (a venv's bin/python keeps the venv). Call it before Main.
func Hosted(python, prefix string) {
	hostPython, hostPrefix = python, prefix
	pybridge.Host()
}

// hostedWorkerCommand is a worker's program and leading argv under
// Hosted; nil otherwise (the master runs its own program again).
func hostedWorkerCommand() []string {
	if hostPython == "" {
		return nil
	}
	return []string{hostPython, hostPython, "-m", "m0serve"}
}

// checkHostedVenv refuses --venv inside a running interpreter: the
// environment is the one that interpreter was started in.
func checkHostedVenv(venv string) error {
	if hostPython == "" || venv == "" {
		return nil
	}
	return fmt.Errorf("--venv %s: m0serve runs inside %s, whose environment is the one in use; run %s/bin/m0serve instead (or leave --venv and M0_VENV unset)",
		venv, hostPython, venv)
}
