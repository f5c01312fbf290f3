//go:build linux

package epoll

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/readiness"
)

func socketPair(t *testing.T) (int, int) {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	t.Cleanup(func() {
		unix.Close(pair[0])
		unix.Close(pair[1])
	})
	return pair[0], pair[1]
}

func newBackend(t *testing.T) *Backend {
	t.Helper()
	b, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestBackPressureDoesNotSpin: a registered socket with unread bytes and
// no recv queued (the loop holding back) must not make Wait return or
// poll again and again; it waits for its timeout in a few epoll_waits.
// Level-triggered interest would report the socket on every epoll_wait.
func TestBackPressureDoesNotSpin(t *testing.T) {
	b := newBackend(t)
	server, client := socketPair(t)
	out := make([]loop.Completion, 8)
	buf := make([]byte, 4)

	if _, err := unix.Write(client, []byte("first")); err != nil {
		t.Fatal(err)
	}
	b.QueueRecv(server, 1, 1, buf) // registers the socket; takes "firs"
	if n, err := b.Wait(out, time.Second); err != nil || n != 1 || out[0].Res != 4 {
		t.Fatalf("first recv: n %d err %v res %d", n, err, out[0].Res)
	}
	// "t" stays unread and more arrives; nothing is queued to read it.
	if _, err := unix.Write(client, []byte("second")); err != nil {
		t.Fatal(err)
	}
	before := b.polls
	if n, err := b.Wait(out, 100*time.Millisecond); err != nil || n != 0 {
		t.Fatalf("Wait with no recv queued: n %d err %v, want a timeout", n, err)
	}
	// One epoll_wait normally; a few more only if signals interrupt it.
	if polls := b.polls - before; polls > 20 {
		t.Fatalf("Wait made %d epoll_wait calls while the loop held back, want a handful", polls)
	}

	// Queueing the recv again completes at once from the remembered
	// readiness, without asking the kernel.
	before = b.polls
	b.QueueRecv(server, 1, 1, buf)
	if n, err := b.Wait(out, time.Second); err != nil || n != 1 || string(out[0].Data) != "tsec" {
		t.Fatalf("recv after holding back: n %d err %v data %q, want \"tsec\"", n, err, out[0].Data)
	}
	if b.polls != before {
		t.Fatalf("a recv on a socket known readable polled %d times, want 0", b.polls-before)
	}
}

// TestReadyWorkDoesNotStarvePolling: while queued work keeps completing
// without a wait, Wait still asks the kernel every readiness.PassesBetweenPolls
// calls, so other sockets' readiness and wakes are seen.
func TestReadyWorkDoesNotStarvePolling(t *testing.T) {
	b := newBackend(t)
	busy, busyPeer := socketPair(t)
	out := make([]loop.Completion, 1)
	data := []byte("x")
	if err := b.Wake(); err != nil {
		t.Fatal(err)
	}
	sawWake := false
	for i := 0; i < 4*readiness.PassesBetweenPolls && !sawWake; i++ {
		// A send that always completes at once (the peer's buffer is
		// drained each round).
		b.QueueSend(busy, 1, 1, data)
		n, err := b.Wait(out, time.Second)
		if err != nil || n != 1 {
			t.Fatalf("Wait: n %d err %v", n, err)
		}
		sawWake = out[0].Op == loop.OpWake
		if !sawWake {
			var sink [16]byte
			unix.Read(busyPeer, sink[:])
		} else {
			// The send is still queued: let it finish.
			if n, _ := b.Wait(out, time.Second); n != 1 || out[0].Op != loop.OpSend {
				t.Fatalf("send after the wake: n %d %+v", n, out[0])
			}
		}
	}
	if !sawWake {
		t.Fatalf("a Wake stayed unseen through %d Waits served from ready work", 4*readiness.PassesBetweenPolls)
	}
}
