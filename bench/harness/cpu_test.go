package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// statLine builds a proc(5) stat line with the given command name and
// utime/stime in fields 14 and 15.
func statLine(comm, utime, stime string) string {
	fields := []string{"42", "(" + comm + ")", "S", "1", "42", "42", "0", "-1", "4194560",
		"100", "0", "0", "0", utime, stime, "0", "0", "20", "0", "3", "0", "12345"}
	return strings.Join(fields, " ") + "\n"
}

func TestParseStatTicksCountsFromTheLastParenthesis(t *testing.T) {
	// A thread may name itself anything, parentheses and spaces included.
	utime, stime, err := parseStatTicks(statLine("we(ird) name) 1 2", "1234", "567"))
	if err != nil {
		t.Fatal(err)
	}
	if utime != 1234 || stime != 567 {
		t.Errorf("utime %d stime %d, want 1234 and 567", utime, stime)
	}
	if _, _, err := parseStatTicks("42 (short) S 1 2"); err == nil {
		t.Error("a truncated stat line was accepted")
	}
	if _, _, err := parseStatTicks("no name here"); err == nil {
		t.Error("a stat line without a name was accepted")
	}
}

// writeTask puts one thread's stat (and children list) in a fake /proc.
func writeTask(t *testing.T, proc string, pid, tid, utime, stime, children string) {
	t.Helper()
	dir := filepath.Join(proc, pid, "task", tid)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(statLine("m0serve", utime, stime)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "children"), []byte(children), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTicksSumsThreadsAndDescendants(t *testing.T) {
	proc := t.TempDir()
	writeTask(t, proc, "100", "100", "10", "5", "")
	writeTask(t, proc, "100", "101", "20", "1", "200 ") // a thread that spawned a worker
	writeTask(t, proc, "200", "200", "3", "4", "300")
	writeTask(t, proc, "200", "201", "100", "0", "")
	// 300 exited between the children read and its own: not counted, no error.
	// 100 reaped children that used 7+2 ticks (cutime, cstime).
	reaped := "100 (m0serve) S 1 100 100 0 -1 0 0 0 0 0 30 6 7 2 20 0 3 0\n"
	if err := os.WriteFile(filepath.Join(proc, "100", "stat"), []byte(reaped), 0o644); err != nil {
		t.Fatal(err)
	}
	clock := CPUClock{ProcRoot: proc, TicksPerSecond: 100}
	ticks, err := clock.Ticks(100)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(10 + 5 + 20 + 1 + 3 + 4 + 100 + 7 + 2); ticks != want {
		t.Errorf("ticks %d, want %d", ticks, want)
	}
	if _, err := clock.Ticks(999); err == nil {
		t.Error("a process that is not there read as zero ticks")
	}
	if us := clock.Microseconds(3); us != 30000 {
		t.Errorf("3 ticks at 100 Hz = %v µs, want 30000", us)
	}
}

func TestTicksOfThisProcessGrowWithWork(t *testing.T) {
	clock := newCPUClock()
	before, err := clock.Ticks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the kernel has charged at least one tick; the deadline
	// only stops a broken reader from hanging the test.
	deadline := time.Now().Add(30 * time.Second)
	sink := 0
	for time.Now().Before(deadline) {
		for i := 0; i < 1_000_000; i++ {
			sink += i
		}
		after, err := clock.Ticks(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			return
		}
	}
	t.Fatalf("no CPU ticks charged to this process over 30 s of spinning (sink %d)", sink)
}
