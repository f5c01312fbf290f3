package tlsrec

import (
	"bytes"
	"testing"
)

// TestPipeRoomSurvivesARead: a receive filling the room Room gave must
// land after the bytes already there even when the handshake goroutine
// reads the pipe empty meanwhile. The pipe used to reset its offsets when
// a read emptied it, and the receive's bytes were then read from the
// buffer's front (epoll's handshakes failed with a protocol alert).
func TestPipeRoomSurvivesARead(t *testing.T) {
	var p pipe
	p.cond.L = &p.mu
	p.feed([]byte("first"))
	room := p.room(16)
	// The goroutine reads what is there while the receive is pending.
	got := make([]byte, 64)
	if n, err := p.Read(got); err != nil || string(got[:n]) != "first" {
		t.Fatalf("read %q, %v", got[:n], err)
	}
	// The kernel fills the room, and the loop says how much.
	n := copy(room, "second")
	p.received(n)
	m, err := p.Read(got)
	if err != nil || !bytes.Equal(got[:m], []byte("second")) {
		t.Fatalf("after the receive: read %q, %v; want \"second\"", got[:m], err)
	}
	if _, err := p.Read(got); err != ErrWouldBlock {
		t.Fatalf("an empty pipe after the handshake: %v, want ErrWouldBlock", err)
	}
}
