package loop

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// adoptQueue holds connections another process passed to this loop
// (Config.PassOn's other end) until the loop thread opens them.
type adoptQueue struct {
	mu      sync.Mutex
	fds     []int
	spare   []int
	pending atomic.Bool
}

// Adopt gives the loop a connected socket another process accepted, to
// serve as one it accepted itself. Safe from any goroutine; a loop that
// has returned from Run closes it.
func (l *Loop) Adopt(fd int) {
	q := &l.adopted
	q.mu.Lock()
	if l.exited.Load() {
		q.mu.Unlock()
		unix.Close(fd)
		return
	}
	q.fds = append(q.fds, fd)
	q.pending.Store(true)
	q.mu.Unlock()
	l.kick()
}

// adoptPassed opens the adopted connections (loop thread). They are not
// passed on again: the process that passed one judged this loop free,
// and a second hop could only bounce between two that think each other
// free. In a drain they are served as accepted ones would be, or closed.
func (l *Loop) adoptPassed() {
	q := &l.adopted
	q.mu.Lock()
	fds := q.fds
	q.fds, q.spare = q.spare[:0], fds
	q.pending.Store(false)
	q.mu.Unlock()
	for _, fd := range fds {
		if l.draining && !l.gentleDrain || l.active >= l.cfg.MaxConnections {
			unix.Close(fd)
			continue
		}
		unix.SetNonblock(fd, true)
		l.open(fd)
	}
}

// closeAdopted closes what was adopted and never opened, as Run returns.
func (l *Loop) closeAdopted() {
	q := &l.adopted
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, fd := range q.fds {
		unix.Close(fd)
	}
	q.fds = q.fds[:0]
}
