//go:build linux

// Command noiouring runs a command where io_uring_setup fails with EPERM,
// as under Docker's default seccomp profile: the end-to-end tests use it
// to prove m0serve falls back to epoll on its own.
//
//	noiouring COMMAND [ARGUMENT...]
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

func init() {
	// The filter is installed on one thread and inherited by the execve
	// from that same thread: keep main on the thread it starts on.
	runtime.LockOSThread()
}

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run installs the filter and execs the command; it returns only when
// that cannot be done, with the exit status to leave with.
func run(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: noiouring COMMAND [ARGUMENT...]")
		return 2
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "noiouring: %v\n", err)
		return 127
	}
	if err := installFilter(); err != nil {
		fmt.Fprintf(stderr, "noiouring: %v\n", err)
		return 1
	}
	err = syscall.Exec(path, args, os.Environ())
	fmt.Fprintf(stderr, "noiouring: exec %s: %v\n", path, err)
	return 126
}
