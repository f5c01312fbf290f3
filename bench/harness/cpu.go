package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// CPUClock reads a server's CPU time from /proc: utime+stime summed over
// every thread of the process and of its descendants (m0serve's workers
// are re-executed children), in clock ticks.
type CPUClock struct {
	ProcRoot string // "/proc", or a fake tree in tests
	// TicksPerSecond is sysconf(_SC_CLK_TCK), from `getconf CLK_TCK`.
	TicksPerSecond float64
}

// newCPUClock asks getconf for the tick rate; Linux has used 100 on every
// mainstream architecture, which is the fallback.
func newCPUClock() CPUClock {
	clock := CPUClock{ProcRoot: "/proc", TicksPerSecond: 100}
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && v > 0 {
			clock.TicksPerSecond = v
		}
	}
	return clock
}

// Ticks is the CPU time so far of pid's threads and of its descendants',
// and of the descendants they have reaped (a master's replaced workers:
// each process's cutime and cstime). A thread that exits between two
// readings takes its ticks with it; the servers measured here keep their
// threads for life.
func (c CPUClock) Ticks(pid int) (uint64, error) {
	var total uint64
	err := c.eachThread(pid, func(p int) error {
		if stat, err := os.ReadFile(filepath.Join(c.ProcRoot, strconv.Itoa(p), "stat")); err == nil {
			reaped, err := parseStatChildTicks(string(stat))
			if err != nil {
				return fmt.Errorf("process %d: %w", p, err)
			}
			total += reaped
		}
		return nil
	}, func(p int, dir string) error {
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			return nil // the thread exited between listing and reading
		}
		utime, stime, err := parseStatTicks(string(stat))
		if err != nil {
			return fmt.Errorf("thread %s of %d: %w", filepath.Base(dir), p, err)
		}
		total += utime + stime
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}

// eachThread calls process for pid and each of its descendants, and
// thread with the /proc directory of each of their threads. The children
// files it follows down exist on kernels built with CONFIG_PROC_CHILDREN
// (Debian's are); without them descendants are not visited. The first
// error a callback returns ends the walk.
func (c CPUClock) eachThread(pid int, process func(p int) error, thread func(p int, dir string) error) error {
	seen := map[int]bool{}
	pending := []int{pid}
	for len(pending) > 0 {
		p := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := process(p); err != nil {
			return err
		}
		taskDir := filepath.Join(c.ProcRoot, strconv.Itoa(p), "task")
		tasks, err := os.ReadDir(taskDir)
		if err != nil {
			if p == pid {
				return fmt.Errorf("read threads of %d: %w", pid, err)
			}
			continue // a descendant that exited meanwhile
		}
		for _, task := range tasks {
			dir := filepath.Join(taskDir, task.Name())
			if err := thread(p, dir); err != nil {
				return err
			}
			if children, err := os.ReadFile(filepath.Join(dir, "children")); err == nil {
				for _, field := range strings.Fields(string(children)) {
					if child, err := strconv.Atoi(field); err == nil {
						pending = append(pending, child)
					}
				}
			}
		}
	}
	return nil
}

// Microseconds converts a tick count.
func (c CPUClock) Microseconds(ticks uint64) float64 {
	return float64(ticks) * 1e6 / c.TicksPerSecond
}

// parseStatTicks takes utime and stime (fields 14 and 15 of proc(5)'s
// stat) from one stat line. The command name (field 2) is in parentheses
// and may itself hold spaces and parentheses, so fields are counted from
// the last ')'.
func parseStatTicks(stat string) (utime, stime uint64, err error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, 0, fmt.Errorf("stat line without a command name: %q", stat)
	}
	fields := strings.Fields(stat[end+1:])
	// fields[0] is field 3 (state), so field n is fields[n-3].
	if len(fields) < 13 {
		return 0, 0, fmt.Errorf("stat line with %d fields after the name: %q", len(fields), stat)
	}
	utime, err = strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("stat utime %q: %w", fields[11], err)
	}
	stime, err = strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("stat stime %q: %w", fields[12], err)
	}
	return utime, stime, nil
}

// parseStatChildTicks takes cutime+cstime (fields 16 and 17 of proc(5)'s
// stat): the CPU time of the children the process has waited for.
func parseStatChildTicks(stat string) (uint64, error) {
	end := strings.LastIndexByte(stat, ')')
	fields := strings.Fields(stat[end+1:])
	if end < 0 || len(fields) < 15 {
		return 0, fmt.Errorf("stat line without cutime and cstime: %q", stat)
	}
	var total uint64
	for _, field := range fields[13:15] {
		v, err := strconv.ParseUint(field, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat cutime/cstime %q: %w", field, err)
		}
		total += v
	}
	return total, nil
}
