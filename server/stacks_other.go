//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package server

import "golang.org/x/sys/unix"

// dumpStacks has faulthandler write Python's stacks (watchStacks), from
// whichever thread the process's signal reaches.
func dumpStacks() error {
	return unix.Kill(unix.Getpid(), stackDumpSignal)
}
