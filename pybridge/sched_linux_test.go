package pybridge

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// batchThreads counts the process's threads under SCHED_BATCH.
func batchThreads(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if attr, err := unix.SchedGetAttr(tid, 0); err == nil && attr.Policy == 3 { // SCHED_BATCH
			n++
		}
	}
	return n
}

// Handler threads (which attach puts under SCHED_BATCH) go back to Go's
// pool with the default policy once their group ends, so the goroutines
// Go runs on them next are not batch-scheduled. Before, they were handed
// back as they were: every group that ended left its threads batch.
func TestHandlerThreadsLeaveNoBatchPolicy(t *testing.T) {
	if os.Getenv("M0_SCHED_NORMAL") == "1" {
		t.Skip("M0_SCHED_NORMAL=1: Batch sets nothing")
	}
	before := batchThreads(t)
	q := NewQueue(16)
	h, err := interp.StartHandlers(4, 1, q, waiting)
	if err != nil {
		t.Fatal(err)
	}
	if during := batchThreads(t); during < before+4 {
		t.Fatalf("%d batch threads with 4 handlers running, %d before: Batch had no effect here", during, before)
	}
	q.Close()
	h.Wait()
	if after := batchThreads(t); after != before {
		t.Fatalf("%d batch threads after the handlers ended, %d before", after, before)
	}
}
