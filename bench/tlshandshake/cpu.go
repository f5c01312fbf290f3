package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// processTicks is the utime+stime, in clock ticks, of pid and of its
// descendants (Granian's worker is a child process; taskset execs into
// the server, so pid is the server itself). A process's own stat counts
// its threads, those that have exited too. Descendants are found through
// /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN, which Debian's
// kernels have). The harness's CPUClock walks the same way; the two are
// separate commands of the bench module.
func processTicks(procRoot string, pid int) (uint64, error) {
	var total uint64
	seen := map[int]bool{}
	pending := []int{pid}
	for len(pending) > 0 {
		p := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		stat, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(p), "stat"))
		if err != nil {
			if p == pid {
				return 0, fmt.Errorf("read the server's stat: %w", err)
			}
			continue // a descendant that exited meanwhile
		}
		ticks, err := statTicks(string(stat))
		if err != nil {
			return 0, fmt.Errorf("process %d: %w", p, err)
		}
		total += ticks
		tasks, _ := os.ReadDir(filepath.Join(procRoot, strconv.Itoa(p), "task"))
		for _, task := range tasks {
			children, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(p), "task", task.Name(), "children"))
			if err != nil {
				continue
			}
			for _, field := range strings.Fields(string(children)) {
				if child, err := strconv.Atoi(field); err == nil {
					pending = append(pending, child)
				}
			}
		}
	}
	return total, nil
}

// statTicks is utime+stime (fields 14 and 15 of proc(5)'s stat), counted
// from the last ')': the command name may hold spaces and parentheses.
func statTicks(stat string) (uint64, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("stat line without a command name: %q", stat)
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat line with %d fields after the name: %q", len(fields), stat)
	}
	var total uint64
	for _, field := range fields[11:13] {
		v, err := strconv.ParseUint(field, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat utime/stime %q: %w", field, err)
		}
		total += v
	}
	return total, nil
}
