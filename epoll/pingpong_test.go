//go:build linux

package epoll_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/epoll"
	"github.com/m0serve/m0serve/loop"
)

// pingPong is a keep-alive exchange on a socketpair, driven the way the
// loop drives a backend: each round queues a recv on one end and a send on
// the other, then Waits until both completed, in both directions.
type pingPong struct {
	backend    *epoll.Backend
	left       int
	right      int
	leftBuf    []byte
	rightBuf   []byte
	request    []byte
	response   []byte
	out        []loop.Completion
	unexpected int
}

func newPingPong(tb testing.TB) *pingPong {
	tb.Helper()
	b, err := epoll.New()
	if err != nil {
		tb.Fatalf("epoll.New: %v", err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatalf("socketpair: %v", err)
	}
	tb.Cleanup(func() {
		unix.Close(pair[0])
		unix.Close(pair[1])
		b.Close()
	})
	return &pingPong{
		backend:  b,
		left:     pair[0],
		right:    pair[1],
		leftBuf:  make([]byte, 4096),
		rightBuf: make([]byte, 4096),
		request:  []byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"),
		response: []byte("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!"),
		out:      make([]loop.Completion, 16),
	}
}

// exchange sends data from one end to the other and waits for both
// completions; it counts any completion that does not fit the exchange.
func (p *pingPong) exchange(from, to int, fromSlot, toSlot uint32, data, toBuf []byte) {
	p.backend.QueueRecv(to, toSlot, 1, toBuf)
	p.backend.QueueSend(from, fromSlot, 1, data)
	sent, received := false, false
	for !sent || !received {
		n, err := p.backend.Wait(p.out, time.Second)
		if err != nil || n == 0 {
			p.unexpected++
			return
		}
		for _, c := range p.out[:n] {
			switch {
			case c.Op == loop.OpSend && c.Slot == fromSlot && int(c.Res) == len(data):
				sent = true
			case c.Op == loop.OpRecv && c.Slot == toSlot && int(c.Res) == len(data):
				received = true
			default:
				p.unexpected++
			}
		}
	}
}

func (p *pingPong) round() {
	p.exchange(p.left, p.right, 1, 2, p.request, p.rightBuf)
	p.exchange(p.right, p.left, 2, 1, p.response, p.leftBuf)
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	p := newPingPong(t)
	p.round() // the first round registers both sockets
	allocs := testing.AllocsPerRun(1000, p.round)
	if p.unexpected != 0 {
		t.Fatalf("%d completions did not fit the exchange", p.unexpected)
	}
	if allocs != 0 {
		t.Fatalf("a keep-alive round allocates %.1f times, want 0", allocs)
	}
}

// BenchmarkPingPong measures one request/response round trip on a
// socketpair through the backend (two passes each way: send and recv
// complete in the same Wait when the peer's bytes are already there).
func BenchmarkPingPong(b *testing.B) {
	p := newPingPong(b)
	p.round()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.round()
	}
	b.StopTimer()
	if p.unexpected != 0 {
		b.Fatalf("%d completions did not fit the exchange", p.unexpected)
	}
}
