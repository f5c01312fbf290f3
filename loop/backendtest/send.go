package backendtest

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
)

func testLargeSendToSlowReader(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	const size = 4 << 20
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	c.shrinkBuffers(t)
	data := pattern(size)
	d.backend.QueueSend(c.fd, 2, 5, data)
	// The kernel buffers hold far less than 4 MiB: while nobody reads,
	// the send cannot have completed.
	d.expectNone(50*time.Millisecond, "4 MiB send with the reader not reading")

	received := make(chan []byte, 1)
	go func() {
		got := make([]byte, 0, size+16)
		chunk := make([]byte, 16<<10)
		c.client.SetReadDeadline(time.Now().Add(hangGuard))
		for reads := 1; len(got) < size+4; reads++ {
			n, err := c.client.Read(chunk)
			got = append(got, chunk[:n]...)
			if err != nil {
				break
			}
			if reads%16 == 0 {
				time.Sleep(time.Millisecond) // a slow reader
			}
		}
		received <- got
	}()

	r := d.next()
	d.expectOp(r, loop.OpSend, 2, 5)
	if r.Res != size {
		t.Fatalf("send Res %d, want %d", r.Res, size)
	}
	// The next send on the same socket starts clean.
	d.backend.QueueSend(c.fd, 2, 6, []byte("tail"))
	r = d.next()
	d.expectOp(r, loop.OpSend, 2, 6)
	if r.Res != 4 {
		t.Fatalf("tail send Res %d, want 4", r.Res)
	}
	got := <-received
	if len(got) != size+4 || !bytes.Equal(got[:size], data) || string(got[size:]) != "tail" {
		t.Fatalf("reader got %d bytes, not the %d sent in order", len(got), size+4)
	}
}

func testHalfClose(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	last := []byte("the last bytes")
	if _, err := c.client.Write(last); err != nil {
		t.Fatal(err)
	}
	if err := c.client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	got := d.recvAll(c.fd, 3, 1, buf, len(last))
	if !bytes.Equal(got, last) {
		t.Fatalf("recv got %q, want %q", got, last)
	}
	// End of stream, and again: a recv after it must not hang.
	for i := 0; i < 2; i++ {
		d.queueRecv(c.fd, 3, 1, buf)
		r := d.next()
		d.expectOp(r, loop.OpRecv, 3, 1)
		if r.Res != 0 || r.More {
			t.Fatalf("recv after the peer's shutdown: Res %d More %v, want 0 and not armed", r.Res, r.More)
		}
	}
	// The other direction is still open.
	reply := []byte("reply after half-close")
	d.backend.QueueSend(c.fd, 3, 1, reply)
	r := d.next()
	d.expectOp(r, loop.OpSend, 3, 1)
	if int(r.Res) != len(reply) {
		t.Fatalf("send after half-close: Res %d, want %d", r.Res, len(reply))
	}
	d.backend.QueueClose(c.fd, 3, 1)
	c.closed = true
	d.expectOp(d.next(), loop.OpClose, 3, 1)
	c.client.SetReadDeadline(time.Now().Add(hangGuard))
	answer, err := io.ReadAll(c.client)
	if err != nil {
		t.Fatalf("client read: %v", err)
	}
	if !bytes.Equal(answer, reply) {
		t.Fatalf("client got %q, want %q", answer, reply)
	}
}
