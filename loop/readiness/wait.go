package readiness

import (
	"time"

	"github.com/m0serve/m0serve/loop"
)

// PassesBetweenPolls bounds how many Waits in a row may be served from
// already-known readiness without asking the kernel: a few sockets with
// endless ready work must not starve the rest.
const PassesBetweenPolls = 8

// Wait is loop.Backend's Wait for a readiness backend. It completes what
// known readiness allows and calls poll, one wait of the backend's poller
// that reports its events into the table, only when nothing is completable
// (and at least every PassesBetweenPolls calls). poll's argument is how
// long it may block: zero polls, negative waits without limit.
func (t *Table) Wait(out []loop.Completion, timeout time.Duration, poll func(wait time.Duration) error) (int, error) {
	if len(out) == 0 {
		return 0, nil
	}
	if t.sincePoll >= PassesBetweenPolls {
		t.sincePoll = 0
		if err := poll(0); err != nil {
			return 0, err
		}
	}
	if n := t.Fill(out); n > 0 {
		t.sincePoll++
		return n, nil
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		left := timeout
		if timeout > 0 {
			left = max(time.Until(deadline), 0)
		}
		t.sincePoll = 0
		if err := poll(left); err != nil {
			return 0, err
		}
		if n := t.Fill(out); n > 0 {
			return n, nil
		}
		if left == 0 {
			return 0, nil
		}
	}
}
