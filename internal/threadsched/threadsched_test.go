//go:build linux

package threadsched

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// policyOfThisThread is the calling thread's policy, or 255 when
// sched_getattr fails (never a real policy).
func policyOfThisThread() uint32 {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return 255
	}
	return attr.Policy
}

// policyAfterBatch calls Batch on a thread of its own and returns that
// thread's policy then. The thread ends with its goroutine (never
// unlocked), so its policy cannot leak to other goroutines of the test.
func policyAfterBatch(t *testing.T) uint32 {
	done := make(chan uint32)
	go func() {
		runtime.LockOSThread()
		if err := Batch(); err != nil {
			t.Errorf("Batch: %v", err)
		}
		done <- policyOfThisThread()
	}()
	return <-done
}

func TestBatchSetsThePolicyOfTheCallingThreadOnly(t *testing.T) {
	if got := policyAfterBatch(t); got != schedBatch {
		t.Fatalf("policy after Batch = %d, want SCHED_BATCH (%d)", got, schedBatch)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if got := policyOfThisThread(); got == schedBatch || got == 255 {
		t.Fatal("another thread's policy changed too")
	}
}

// Unlock gives the thread back to Go's pool under the default policy: the
// thread, still alive, is not batch-scheduled for its next goroutines
// (or, where the policy could not be restored, it has ended).
func TestUnlockRestoresTheDefaultPolicy(t *testing.T) {
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		if err := Batch(); err != nil {
			t.Errorf("Batch: %v", err)
		}
		id := unix.Gettid()
		Unlock()
		tid <- id
	}()
	id := <-tid
	attr, err := unix.SchedGetAttr(id, 0)
	if err == unix.ESRCH {
		return // ended with its goroutine: nothing leaked
	}
	if err != nil || attr.Policy == schedBatch {
		t.Fatalf("thread %d after Unlock: %+v, %v", id, attr, err)
	}
}

func TestNormalOnRequest(t *testing.T) {
	t.Setenv("M0_SCHED_NORMAL", "1")
	if got := policyAfterBatch(t); got == schedBatch || got == 255 {
		t.Fatalf("M0_SCHED_NORMAL=1: policy %d, want the default", got)
	}
}

func TestYielderYieldsOncePerInterval(t *testing.T) {
	var y Yielder
	steps := []struct {
		now   int64
		yield bool
	}{
		{1e6, false},
		{yieldInterval, true},
		{yieldInterval + 4e6, false},
		{2*yieldInterval - 1, false},
		{2 * yieldInterval, true},
		{2*yieldInterval + 1, false},
	}
	for _, s := range steps {
		before := y.last
		y.Maybe(s.now)
		if yielded := y.last != before; yielded != s.yield {
			t.Fatalf("at %d ns: yielded %v, want %v", s.now, yielded, s.yield)
		}
	}
}
