package backendtest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
)

func testWakeInterruptsWait(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	woke := make(chan error, 1)
	go func() {
		time.Sleep(20 * time.Millisecond) // most likely inside Wait by now
		woke <- d.backend.Wake()
	}()
	// One Wait with the guard as its timeout: only the Wake can end it.
	if n := d.wait(hangGuard); n == 0 {
		t.Fatalf("Wait returned no completion although Wake was called")
	}
	if err := <-woke; err != nil {
		t.Fatalf("Wake: %v", err)
	}
	if c := d.next(); c.Op != loop.OpWake || c.Slot != 0 {
		t.Fatalf("got %s, want wake", describe(c))
	}
}

func testWakesCoalesce(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	const wakes = 1000
	d := newDriver(t, newBackend, 8)
	for i := 0; i < wakes; i++ {
		if err := d.backend.Wake(); err != nil {
			t.Fatalf("Wake: %v", err)
		}
	}
	count := 0
	for d.wait(30*time.Millisecond) > 0 || len(d.waiting) > 0 {
		for _, c := range d.waiting {
			if c.Op != loop.OpWake {
				t.Fatalf("got %s, want only wakes", describe(c))
			}
			count++
		}
		d.waiting = d.waiting[:0]
	}
	if count == 0 || count >= wakes {
		t.Fatalf("%d Wakes before Wait gave %d wake completions, want at least 1 and fewer than %d", wakes, count, wakes)
	}
	t.Logf("%d Wakes → %d completions", wakes, count)
}

// testLastWakeNotLost: a producer publishes a sequence number and calls
// Wake, racing with the loop's Waits. The loop must always get a wake
// after the last publication.
func testLastWakeNotLost(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	const rounds = 20000
	d := newDriver(t, newBackend, 8)
	var published atomic.Int64
	failed := make(chan error, 1)
	go func() {
		for i := int64(1); i <= rounds; i++ {
			published.Store(i)
			if err := d.backend.Wake(); err != nil {
				failed <- err
				return
			}
		}
		failed <- nil
	}()
	wakes := 0
	for {
		// A Wait that only a Wake can end: if the last one were lost, it
		// would run to the guard.
		if d.wait(hangGuard) == 0 {
			t.Fatalf("no wake after sequence %d of %d", published.Load(), rounds)
		}
		for _, c := range d.waiting {
			if c.Op != loop.OpWake {
				t.Fatalf("got %s, want only wakes", describe(c))
			}
			wakes++
		}
		d.waiting = d.waiting[:0]
		if published.Load() == rounds {
			break
		}
	}
	if err := <-failed; err != nil {
		t.Fatalf("Wake: %v", err)
	}
	t.Logf("%d Wakes → %d completions", rounds, wakes)
}
