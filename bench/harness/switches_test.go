package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSwitchesSumsThreads(t *testing.T) {
	root := t.TempDir()
	for tid, status := range map[string]string{
		"7": "Name:\tm0serve\nvoluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t3\n",
		"8": "Name:\tm0serve\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t1\n",
	} {
		dir := filepath.Join(root, "7", "task", tid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := CPUClock{ProcRoot: root}.Switches(7)
	if got != (Switches{Voluntary: 15, Involuntary: 4}) {
		t.Fatalf("got %+v, want 15 voluntary and 4 involuntary", got)
	}
}
