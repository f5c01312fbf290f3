//go:build linux

package uring

import (
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

func TestWakeFromAnotherGoroutine(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		woken := make(chan error, 1)
		go func() {
			// Give the loop the chance to be blocked in Wait; the test
			// passes either way, the wake must arrive in both.
			time.Sleep(5 * time.Millisecond)
			woken <- b.Wake()
		}()
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpWake })
		if err := <-woken; err != nil {
			t.Fatalf("Wake: %v", err)
		}
		if len(seen) != 1 {
			t.Fatalf("completions %+v, want the one OpWake", seen)
		}

		// Wakes before a Wait coalesce into one OpWake, and the read is
		// re-armed: nothing more without another Wake, then a new one.
		for range 3 {
			if err := b.Wake(); err != nil {
				t.Fatalf("Wake: %v", err)
			}
		}
		out := make([]loop.Completion, 8)
		wakes := 0
		for range 3 {
			n, err := b.Wait(out, 20*time.Millisecond)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			for _, c := range out[:n] {
				if c.Op != loop.OpWake {
					t.Fatalf("unexpected completion %+v", c)
				}
				wakes++
			}
		}
		if wakes != 1 {
			t.Fatalf("three Wakes before Wait gave %d OpWake, want 1", wakes)
		}
		if err := b.Wake(); err != nil {
			t.Fatalf("Wake: %v", err)
		}
		collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpWake })
	})
}

func TestWaitTimesOutWithNothingReady(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		out := make([]loop.Completion, 4)
		for _, timeout := range []time.Duration{0, time.Millisecond} {
			n, err := b.Wait(out, timeout)
			if err != nil || n != 0 {
				t.Fatalf("Wait(%v) with nothing queued = %d, %v; want 0, nil", timeout, n, err)
			}
		}
		// No room to report anything: submit and return, whatever the
		// timeout (a hang here ends in the go test timeout).
		if err := b.Wake(); err != nil {
			t.Fatalf("Wake: %v", err)
		}
		if n, err := b.Wait(nil, time.Hour); err != nil || n != 0 {
			t.Fatalf("Wait(nil, 1h) = %d, %v; want 0, nil", n, err)
		}
		collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpWake })
	})
}

// Signals end io_uring_enter early (the Go runtime preempts threads with
// SIGURG); Wait must not mistake that for the timeout: zero completions
// means the whole timeout passed.
func TestWaitZeroOnlyAfterTimeout(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		tid := unix.Gettid()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
					unix.Tgkill(unix.Getpid(), tid, unix.SIGURG)
				}
			}
		}()
		defer func() { close(stop); <-done }()
		out := make([]loop.Completion, 4)
		const timeout = 60 * time.Millisecond
		start := time.Now()
		n, err := b.Wait(out, timeout)
		if elapsed := time.Since(start); err != nil || n != 0 || elapsed < timeout {
			t.Fatalf("Wait(%v) = %d, %v after %v: want 0, nil after the whole timeout", timeout, n, err, elapsed)
		}
	})
}
