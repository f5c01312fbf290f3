package supervisor

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/m0serve/m0serve/internal/workerproto"
	"golang.org/x/sys/unix"
)

// workerProcAttr puts a worker in its own process group (a terminal's
// Ctrl-C reaches the master only, which drains the workers) and has the
// kernel signal it when the master dies: with a signal of its own, which
// the worker takes as one drain however often it comes (the kernel sends
// it again as each of the master's threads exits).
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: workerproto.MasterGoneSignal}
}

// residentBytes reads a process's resident set size from /proc/PID/statm.
func residentBytes(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	fields := bytes.Fields(data)
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc/%d/statm: %q", pid, data)
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/statm: %w", pid, err)
	}
	return pages * int64(os.Getpagesize()), nil
}

// heartbeatFile makes the file a worker and its master share (workerproto's
// heartbeat layout) in memory, with no name: a read-only root, a /tmp
// that is not writable (Kubernetes' readOnlyRootFilesystem) or a slow
// disk-backed one (gunicorn #1194) are nothing to it. Close-on-exec: the
// worker gets it through ForkExec's file list, as fd 5.
func heartbeatFile() (*os.File, error) {
	fd, err := unix.MemfdCreate("m0serve-heartbeat", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	return os.NewFile(uintptr(fd), "m0serve-heartbeat"), nil
}

// waitExit returns once the worker pid has ended, without reaping it
// (WNOWAIT): the master's goroutine reaps it (osProcess.reap), so the pid
// stays this master's zombie, never another process's, while a kill of it
// may still be on its way. Where a seccomp filter refuses waitid, it
// reaps the worker itself and returns the status, with the refusal.
func waitExit(pid int) (*syscall.WaitStatus, error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		switch err {
		case nil:
			return nil, nil
		case unix.EINTR:
		default:
			status := reapNow(pid)
			return &status, fmt.Errorf("waitid: %w", err)
		}
	}
}
