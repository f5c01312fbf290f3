package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SyscallCount is one line of strace -c's summary.
type SyscallCount struct {
	Name       string  `json:"name"`
	Calls      int64   `json:"calls"`
	Errors     int64   `json:"errors,omitempty"`
	PerRequest float64 `json:"per_request"`
}

// SyscallBudget is one arm's syscalls over one keep-alive wrk run.
type SyscallBudget struct {
	Arm      string         `json:"arm"`
	Scenario string         `json:"scenario"`
	Requests int64          `json:"requests"`
	Total    int64          `json:"total_calls"`
	PerReq   float64        `json:"total_per_request"`
	Counts   []SyscallCount `json:"counts"`
}

// MeasureSyscalls attaches `strace -f -c` to each warmed-up server for one
// keep-alive wrk run and divides its counts by the requests wrk completed.
// Attaching after the warm-up, rather than starting the server under
// strace, keeps start-up's mmaps and thread creation out of the budget.
// ptrace slows every syscall about tenfold, so rps under strace means
// nothing; calls per request is the figure.
func (s *Session) MeasureSyscalls(ctx context.Context, scenario Scenario, duration, warmup time.Duration) []SyscallBudget {
	var budgets []SyscallBudget
	for _, record := range s.live() {
		if _, err := s.runOnce(ctx, scenario, record, warmup); err != nil {
			if !s.runFailed(record, "warm-up", err) {
				continue
			}
		}
		budget, err := s.traceOnce(ctx, scenario, record, duration)
		if err != nil {
			if ctx.Err() != nil {
				return budgets
			}
			s.fail(record, fmt.Errorf("syscalls: %w", err))
			continue
		}
		budgets = append(budgets, budget)
	}
	return budgets
}

func (s *Session) traceOnce(ctx context.Context, scenario Scenario, record *ArmRecord, duration time.Duration) (SyscallBudget, error) {
	server := s.servers[record.Name]
	countsPath := filepath.Join(s.LogDir, record.Name+".strace")
	strace := exec.Command("taskset", "-c", s.ServerCPU, "strace", "-f", "-c", "-o", countsPath,
		"-p", strconv.Itoa(server.Pid()))
	straceLog, err := os.Create(countsPath + ".log")
	if err != nil {
		return SyscallBudget{}, fmt.Errorf("strace log: %w", err)
	}
	defer straceLog.Close()
	strace.Stderr = straceLog
	if err := strace.Start(); err != nil {
		return SyscallBudget{}, fmt.Errorf("start strace: %w", err)
	}
	// strace says "Process N attached" per thread on stderr; the run
	// starts once it has, so no request goes uncounted.
	if err := waitForText(countsPath+".log", "attached", 10*time.Second); err != nil {
		strace.Process.Kill()
		strace.Wait()
		return SyscallBudget{}, err
	}
	time.Sleep(200 * time.Millisecond) // the other threads' attach lines
	run, runErr := s.runOnce(ctx, scenario, record, duration)
	// SIGINT makes strace detach and write its summary.
	if err := strace.Process.Signal(syscall.SIGINT); err != nil {
		return SyscallBudget{}, fmt.Errorf("stop strace: %w", err)
	}
	if err := strace.Wait(); err != nil {
		// strace exits non-zero after an interrupt on some versions; the
		// summary file decides.
		s.Log("strace for %s exited: %v", record.Name, err)
	}
	if runErr != nil {
		return SyscallBudget{}, runErr
	}
	summary, err := os.ReadFile(countsPath)
	if err != nil {
		return SyscallBudget{}, fmt.Errorf("read strace summary: %w", err)
	}
	counts, total, err := parseStraceSummary(string(summary))
	if err != nil {
		return SyscallBudget{}, err
	}
	budget := SyscallBudget{Arm: record.Name, Scenario: scenario.Name, Requests: run.Requests, Total: total,
		PerReq: float64(total) / float64(run.Requests)}
	for _, c := range counts {
		c.PerRequest = float64(c.Calls) / float64(run.Requests)
		budget.Counts = append(budget.Counts, c)
	}
	return budget, nil
}

// waitForText polls a file until it holds text.
func waitForText(path, text string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), text) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	data, _ := os.ReadFile(path)
	return fmt.Errorf("strace did not attach within %v: %s", timeout, lastLines(string(data), 3))
}

// parseStraceSummary reads strace -c's table:
//
//	% time     seconds  usecs/call     calls    errors syscall
//	------ ----------- ----------- --------- --------- ----------------
//	 60.00    0.000060          30         2           write
//	 40.00    0.000040          40         1         1 openat
//	------ ----------- ----------- --------- --------- ----------------
//	100.00    0.000100          33         3         1 total
//
// The errors column is blank when a call never failed. The counts come
// back sorted by calls, most first; total is the "total" line.
func parseStraceSummary(text string) (counts []SyscallCount, total int64, err error) {
	scanner := bufio.NewScanner(strings.NewReader(text))
	haveTotal := false
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 5 || fields[0] == "%" || strings.HasPrefix(fields[0], "-") {
			continue
		}
		name := fields[len(fields)-1]
		calls, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("strace calls %q in %q: %w", fields[3], scanner.Text(), err)
		}
		var errors int64
		if len(fields) >= 6 {
			errors, err = strconv.ParseInt(fields[4], 10, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("strace errors %q in %q: %w", fields[4], scanner.Text(), err)
			}
		}
		if name == "total" {
			total, haveTotal = calls, true
			continue
		}
		counts = append(counts, SyscallCount{Name: name, Calls: calls, Errors: errors})
	}
	if !haveTotal {
		return nil, 0, fmt.Errorf("strace summary without a total line: %s", lastLines(text, 3))
	}
	sort.SliceStable(counts, func(i, j int) bool { return counts[i].Calls > counts[j].Calls })
	return counts, total, nil
}

// printSyscalls writes each arm's syscalls per request, by name.
func printSyscalls(w io.Writer, budgets []SyscallBudget) {
	for _, b := range budgets {
		fmt.Fprintf(w, "\n%s, %s: %d requests, %d syscalls, %.3f per request\n", b.Arm, b.Scenario, b.Requests, b.Total, b.PerReq)
		fmt.Fprintf(w, "  %-20s %10s %12s %8s\n", "syscall", "calls", "per request", "errors")
		for _, c := range b.Counts {
			fmt.Fprintf(w, "  %-20s %10d %12.4f %8d\n", c.Name, c.Calls, c.PerRequest, c.Errors)
		}
	}
}
