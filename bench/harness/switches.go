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
	seen := map[int]bool{}
	pending := []int{pid}
	for len(pending) > 0 {
		p := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		taskDir := filepath.Join(c.ProcRoot, strconv.Itoa(p), "task")
		tasks, err := os.ReadDir(taskDir)
		if err != nil {
			continue
		}
		for _, task := range tasks {
			if status, err := os.ReadFile(filepath.Join(taskDir, task.Name(), "status")); err == nil {
				s := parseStatusSwitches(string(status))
				total.Voluntary += s.Voluntary
				total.Involuntary += s.Involuntary
			}
			if children, err := os.ReadFile(filepath.Join(taskDir, task.Name(), "children")); err == nil {
				for _, field := range strings.Fields(string(children)) {
					if child, err := strconv.Atoi(field); err == nil {
						pending = append(pending, child)
					}
				}
			}
		}
	}
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
