package server

import "golang.org/x/sys/unix"

// dumpStacks has faulthandler write Python's stacks (watchStacks). The
// signal goes to this thread, so that the dump is written before the
// caller goes on (the 504 goes out after it, and the log reads in order).
func dumpStacks() error {
	return unix.Tgkill(unix.Getpid(), unix.Gettid(), stackDumpSignal)
}
