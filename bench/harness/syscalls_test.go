package main

import "testing"

const straceSummary = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 55.21    0.412345          13     30624           write
 40.02    0.298765           7     38381      7756 read
  3.50    0.026123          10      2432           nanosleep
  1.27    0.009512           8      1060           epoll_pwait
------ ----------- ----------- --------- --------- ----------------
100.00    0.746745          10     72497      7756 total
`

func TestParseStraceSummary(t *testing.T) {
	counts, total, err := parseStraceSummary(straceSummary)
	if err != nil {
		t.Fatal(err)
	}
	if total != 72497 {
		t.Errorf("total %d, want 72497", total)
	}
	want := []SyscallCount{
		{Name: "read", Calls: 38381, Errors: 7756},
		{Name: "write", Calls: 30624},
		{Name: "nanosleep", Calls: 2432},
		{Name: "epoll_pwait", Calls: 1060},
	}
	if len(counts) != len(want) {
		t.Fatalf("%d counts, want %d: %+v", len(counts), len(want), counts)
	}
	for i := range want {
		if counts[i] != want[i] {
			t.Errorf("count %d = %+v, want %+v (sorted by calls)", i, counts[i], want[i])
		}
	}
}

func TestParseStraceSummaryNeedsTotal(t *testing.T) {
	if _, _, err := parseStraceSummary("strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n"); err == nil {
		t.Fatal("a summary without a total line was accepted")
	}
}
