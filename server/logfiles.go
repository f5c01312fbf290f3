package server

import (
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// accessLogFD is where access log lines go: stderr, or the descriptor
// --access-log-file is kept open on (replaced in place on a reopen, so a
// handler thread writing a line never sees a closed descriptor).
var accessLogFD atomic.Int32

func init() { accessLogFD.Store(2) }

var reopenMu sync.Mutex

// ReopenLogFiles opens --error-log-file onto stderr (the server's log,
// Python's tracebacks and warnings) and --access-log-file for the access
// log, appending; called at start, and again on SIGUSR1 after a log
// rotation renamed them. Without them it does nothing.
func ReopenLogFiles(cfg *Config) error {
	reopenMu.Lock()
	defer reopenMu.Unlock()
	if cfg.ErrorLogFile != "" {
		if err := reopenOnto(cfg.ErrorLogFile, 2); err != nil {
			return &ConfigError{Flag: "error-log-file", Reason: err.Error()}
		}
	}
	if cfg.AccessLogFile != "" {
		fd := int(accessLogFD.Load())
		if fd == 2 {
			// First open: a descriptor of its own, kept for the process's life.
			file, err := openLog(cfg.AccessLogFile)
			if err != nil {
				return &ConfigError{Flag: "access-log-file", Reason: err.Error()}
			}
			accessLogFD.Store(int32(file))
			return nil
		}
		if err := reopenOnto(cfg.AccessLogFile, fd); err != nil {
			return &ConfigError{Flag: "access-log-file", Reason: err.Error()}
		}
	}
	return nil
}

func openLog(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", path, err)
	}
	return fd, nil
}

// reopenOnto opens path and puts it at descriptor target, atomically.
func reopenOnto(path string, target int) error {
	fd, err := openLog(path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Dup2(fd, target); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if target != 2 {
		unix.CloseOnExec(target)
	}
	return nil
}
