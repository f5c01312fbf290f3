package loop

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// futex(2) operations (linux/futex.h); x/sys/unix does not name them.
const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// parking puts handler threads to sleep on a futex word (Linux 2.6).
//
// Why not a sync.Cond or a channel: the threads that take jobs are locked
// to their OS threads (each holds a Python thread state), and a locked
// goroutine that blocks in the Go scheduler — or calls runtime.Gosched —
// must hand its P to another thread and park its own (stoplockedm,
// handoffp: two futex calls and a thread switch each way), a large share
// of the server's CPU at one connection (bench/README.md). A thread
// blocked in the futex syscall keeps its P while another P is idle
// (GOMAXPROCS is locked threads + 1), so a wake is one FUTEX_WAKE and the
// woken thread goes on without the scheduler.
type parking struct {
	word    atomic.Uint32 // bumped by every wake; sleepers wait on a stale value
	waiters atomic.Int32
}

// prepare returns the value to sleep on; call it, then look for work once
// more, then sleep. A wake between the two makes sleep return at once.
func (p *parking) prepare() uint32 {
	p.waiters.Add(1)
	return p.word.Load()
}

// sleep blocks until a wake after prepare (or a spurious return: callers
// loop), then stops counting this thread as a waiter.
func (p *parking) sleep(seen uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.word)),
		futexWaitPrivate, uintptr(seen), 0, 0, 0)
	p.waiters.Add(-1)
}

// cancel stops counting a thread that found work after prepare.
func (p *parking) cancel() { p.waiters.Add(-1) }

// wake wakes up to n sleepers; it costs nothing when none is waiting.
func (p *parking) wake(n int) {
	if p.waiters.Load() == 0 {
		return
	}
	p.word.Add(1)
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.word)),
		futexWakePrivate, uintptr(n), 0, 0, 0)
}
