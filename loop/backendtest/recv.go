package backendtest

import (
	"bytes"
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
)

func testRecvIntoSlotBuffer(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	buf := make([]byte, 4096)

	// Bytes already waiting when the recv is queued.
	first := []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if _, err := c.client.Write(first); err != nil {
		t.Fatal(err)
	}
	got := d.recvAll(c.fd, 7, 3, buf, len(first))
	if !bytes.Equal(got, first) {
		t.Fatalf("recv got %q, want %q", got, first)
	}

	// A recv queued before its bytes: nothing completes until they come.
	d.queueRecv(c.fd, 7, 3, buf)
	d.expectNone(30*time.Millisecond, "recv with no data sent")
	second := []byte("second request")
	if _, err := c.client.Write(second); err != nil {
		t.Fatal(err)
	}
	r := d.next()
	d.expectOp(r, loop.OpRecv, 7, 3)
	checkRecvData(t, r, buf)
	got = append([]byte(nil), r.Data...)
	if len(got) < len(second) {
		got = append(got, d.recvAll(c.fd, 7, 3, buf, len(second)-len(got))...)
	}
	if !bytes.Equal(got, second) {
		t.Fatalf("recv got %q, want %q", got, second)
	}
}

func testRecvLargerThanBuffer(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	want := pattern(300 << 10)
	written := make(chan error, 1)
	go func() {
		_, err := c.client.Write(want)
		written <- err
	}()
	got := d.recvAll(c.fd, 1, 1, make([]byte, 4096), len(want))
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("received %d bytes that differ from the %d sent", len(got), len(want))
	}
}

// testOutHoldsOne: with room for one completion per Wait, every ready
// completion still arrives, one per call.
func testOutHoldsOne(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	const connections = 5
	d := newDriver(t, newBackend, 1)
	l := listen(t)
	buffers := make([][]byte, connections)
	for i := range buffers {
		c := l.connect(t)
		buffers[i] = make([]byte, 64)
		if _, err := c.client.Write([]byte{'a' + byte(i)}); err != nil {
			t.Fatal(err)
		}
		d.backend.QueueRecv(c.fd, uint32(i), 1, buffers[i])
	}
	seen := make(map[uint32]bool)
	for len(seen) < connections {
		r := d.next()
		if r.Op != loop.OpRecv || r.Gen != 1 || r.Res != 1 || seen[r.Slot] || r.Slot >= connections {
			t.Fatalf("got %s, want one 1-byte recv per slot", describe(r))
		}
		if r.Data[0] != 'a'+byte(r.Slot) {
			t.Fatalf("slot %d got byte %q, want %q", r.Slot, r.Data[0], 'a'+byte(r.Slot))
		}
		seen[r.Slot] = true
	}
}
