package pybridge

import (
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// batchThreads is the set of the process's threads under SCHED_BATCH.
func batchThreads(t *testing.T) map[int]bool {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	batch := map[int]bool{}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if attr, err := unix.SchedGetAttr(tid, 0); err == nil && attr.Policy == 3 { // SCHED_BATCH
			batch[tid] = true
		}
	}
	return batch
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
	ended := false
	end := func() {
		if !ended {
			ended = true
			q.Close()
			h.Wait()
		}
	}
	defer end()
	// The threads Batch set while the group runs. Each handler sets it
	// on its own thread as it starts, which may be after StartHandlers
	// returns: wait for the four (a bound against hanging, not a timing).
	// A handler may also land on a thread that was batch already (one an
	// earlier test's goroutine still holds, seen under -race): it is not
	// counted, so at least one, not four, must show Batch had an effect.
	var handlers []int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		handlers = handlers[:0]
		for tid := range batchThreads(t) {
			if !before[tid] {
				handlers = append(handlers, tid)
			}
		}
		if len(handlers) >= 4 || time.Now().After(deadline) {
			break
		}
	}
	if len(handlers) == 0 {
		t.Fatalf("no thread became batch with 4 handlers starting: Batch had no effect here")
	}
	end()
	for _, tid := range handlers {
		attr, err := unix.SchedGetAttr(tid, 0)
		if err == nil && attr.Policy == 3 {
			t.Errorf("thread %d, a handler's, still SCHED_BATCH after its group ended", tid)
		}
	}
}
