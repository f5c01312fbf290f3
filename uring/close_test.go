//go:build linux

package uring

import (
	"io"
	"testing"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// closeAndCollect queues a close and returns the completions up to OpClose
// for slot, checking that OpClose is last and succeeded.
func closeAndCollect(t *testing.T, b *Backend, fd int, slot, gen uint32) []loop.Completion {
	t.Helper()
	b.QueueClose(fd, slot, gen)
	seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpClose && c.Slot == slot })
	if c := seen[len(seen)-1]; c.Gen != gen || c.Res != 0 {
		t.Fatalf("OpClose %+v, want gen %d Res 0", c, gen)
	}
	return seen
}

func TestCloseWhileRecvPending(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		b.QueueRecv(fd, 4, 7, make([]byte, 256))
		if _, err := b.Wait(nil, 0); err != nil { // the receive is armed
			t.Fatalf("Wait: %v", err)
		}
		seen := closeAndCollect(t, b, fd, 4, 7)
		recvs := 0
		for _, c := range seen {
			if c.Op == loop.OpRecv && c.Slot == 4 {
				recvs++
				if c.Res != -int32(unix.ECANCELED) || c.More || c.Gen != 7 {
					t.Fatalf("cancelled receive %+v, want Res -ECANCELED, More false, gen 7", c)
				}
			}
		}
		if recvs != 1 {
			t.Fatalf("completions %+v: want the receive's completion once before OpClose", seen)
		}
		if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("client read after close = %d, %v; want EOF", n, err)
		}
	})
}

func TestCloseWhileSendPending(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 65536)
		conn.SetReadBuffer(8192)
		// The client never reads: the send cannot finish.
		b.QueueSend(fd, 6, 3, pattern(4<<20))
		b.QueueRecv(fd, 6, 3, make([]byte, 256))
		if _, err := b.Wait(nil, 0); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		seen := closeAndCollect(t, b, fd, 6, 3)
		var sends, recvs int
		for _, c := range seen {
			switch {
			case c.Op == loop.OpSend && c.Slot == 6:
				sends++
				if c.Res >= 0 {
					t.Fatalf("send cut short by close: %+v, want a negative Res", c)
				}
			case c.Op == loop.OpRecv && c.Slot == 6:
				if !c.More {
					recvs++
				}
			}
		}
		if sends != 1 || recvs != 1 {
			t.Fatalf("completions %+v: want the send's and the receive's before OpClose", seen)
		}
	})
}

// A closed slot is reusable after OpClose: a new connection on the same
// slot with the next generation works, and nothing of the old one leaks.
func TestSlotReuseAfterClose(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		for gen := uint32(1); gen <= 3; gen++ {
			fd, conn := accept(t, b, addr)
			conn.Write([]byte("abc"))
			got, _ := receive(t, b, fd, 8, gen, make([]byte, 16), 3)
			if string(got) != "abc" {
				t.Fatalf("gen %d: received %q", gen, got)
			}
			for _, c := range closeAndCollect(t, b, fd, 8, gen) {
				if c.Slot == 8 && c.Gen != gen {
					t.Fatalf("gen %d: completion of another generation %+v", gen, c)
				}
			}
		}
	})
}
