package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Switches are context switches of a server's threads: voluntary (a
// thread blocked: a futex, a wait for I/O) and involuntary (the scheduler
// preempted it). A request handed from one thread to another shows as
// voluntary switches; at one connection they are most of the handoff's
// cost.
type Switches struct {
	Voluntary, Involuntary uint64
}

// Switches sums voluntary_ctxt_switches and nonvoluntary_ctxt_switches
// of every thread of pid and of its descendants (proc(5)'s status), as
// Ticks sums CPU time. A thread that exits takes its count with it.
func (c CPUClock) Switches(pid int) Switches {
	var total Switches
	// A pid whose threads cannot be listed counts 0, as one that exited.
	_ = c.eachThread(pid, func(int) error { return nil }, func(_ int, dir string) error {
		if status, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
			s := parseStatusSwitches(string(status))
			total.Voluntary += s.Voluntary
			total.Involuntary += s.Involuntary
		}
		return nil
	})
	return total
}

// parseStatusSwitches reads the two counts from a status file; a missing
// line counts 0.
func parseStatusSwitches(status string) Switches {
	var s Switches
	for _, line := range strings.Split(status, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "voluntary_ctxt_switches":
			s.Voluntary = n
		case "nonvoluntary_ctxt_switches":
			s.Involuntary = n
		}
	}
	return s
}
