//go:build !linux

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// waitExit returns once the worker pid has ended, without reaping it: a
// kqueue's EVFILT_PROC NOTE_EXIT (there is no waitid WNOWAIT in x/sys
// here). The master's goroutine reaps it (osProcess.reap), so the pid
// stays this master's zombie, never another process's, while a kill of it
// may still be on its way. ESRCH at registration: it has ended already
// (a zombie of ours: nobody else reaps it). Where the kqueue fails, it
// reaps the worker itself and returns the status, with the failure.
func waitExit(pid int) (*syscall.WaitStatus, error) {
	if err := waitExitKqueue(pid); err != nil {
		status := reapNow(pid)
		return &status, err
	}
	return nil, nil
}

func waitExitKqueue(pid int) error {
	kq, err := unix.Kqueue()
	if err != nil {
		return fmt.Errorf("kqueue: %w", err)
	}
	defer unix.Close(kq)
	change := make([]unix.Kevent_t, 1)
	unix.SetKevent(&change[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	change[0].Fflags = unix.NOTE_EXIT
	events := make([]unix.Kevent_t, 1)
	for {
		// Again after EINTR: adding the same event twice changes nothing.
		_, err := unix.Kevent(kq, change, events, nil)
		switch err {
		case unix.EINTR:
		case nil, unix.ESRCH:
			return nil
		default:
			return fmt.Errorf("kevent: %w", err)
		}
	}
}
