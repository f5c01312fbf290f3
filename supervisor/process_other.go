//go:build !linux

package supervisor

import (
	"errors"
	"os"
	"syscall"
)

// workerProcAttr puts a worker in its own process group. There is no
// death signal here: a worker sees its master gone as the end of its
// control socket.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func residentBytes(pid int) (int64, error) {
	return 0, errors.New("no /proc/PID/statm")
}

func steer(fd int, positions []int) error { return errors.New("SO_REUSEPORT steering: Linux only") }

func queued(fd int) (int, error) { return 0, nil }

// heartbeatFile: a temporary file, unlinked at once (no memfd_create
// here); TMPDIR must be writable.
func heartbeatFile() (*os.File, error) {
	f, err := os.CreateTemp("", "m0serve-heartbeat-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
