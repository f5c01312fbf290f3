//go:build !linux

package loop

import (
	"sync"
	"sync/atomic"
)

// parking puts handler threads to sleep on a condition variable where
// there is no futex (the Linux version says why it prefers one).
type parking struct {
	mu      sync.Mutex
	cond    *sync.Cond
	word    uint32 // guarded by mu
	waiters atomic.Int32
}

func (p *parking) prepare() uint32 {
	p.waiters.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.word
}

func (p *parking) sleep(seen uint32) {
	p.mu.Lock()
	if p.cond == nil {
		p.cond = sync.NewCond(&p.mu)
	}
	for p.word == seen {
		p.cond.Wait()
	}
	p.mu.Unlock()
	p.waiters.Add(-1)
}

func (p *parking) cancel() { p.waiters.Add(-1) }

func (p *parking) wake(n int) {
	if p.waiters.Load() == 0 {
		return
	}
	p.mu.Lock()
	p.word++
	if p.cond != nil {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}
