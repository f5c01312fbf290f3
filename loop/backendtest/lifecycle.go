package backendtest

import (
	"fmt"
	"io"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
)

func testPeerReset(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	buf := make([]byte, 4096)
	d.backend.QueueRecv(c.fd, 1, 1, buf)
	d.expectNone(20*time.Millisecond, "recv with no data sent")
	// Linger 0 makes close send RST instead of FIN.
	if err := c.client.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	c.client.Close()
	r := d.next()
	d.expectOp(r, loop.OpRecv, 1, 1)
	if r.Res >= 0 {
		t.Fatalf("recv on a reset connection: Res %d, want -errno", r.Res)
	}
	t.Logf("recv after reset: errno %d", -r.Res)
	d.backend.QueueSend(c.fd, 1, 1, pattern(64<<10))
	r = d.next()
	d.expectOp(r, loop.OpSend, 1, 1)
	if r.Res >= 0 {
		t.Fatalf("send on a reset connection: Res %d, want -errno", r.Res)
	}
	d.backend.QueueClose(c.fd, 1, 1)
	c.closed = true
	d.expectOp(d.next(), loop.OpClose, 1, 1)
}

// expectCancelThenClose checks what QueueClose of slot/gen owes: the
// pending op completes (with an error: nothing was sent to complete it
// with), then OpClose, then nothing for the slot.
func expectCancelThenClose(d *driver, pending loop.Op, slot, gen uint32) {
	d.t.Helper()
	r := d.next()
	d.expectOp(r, pending, slot, gen)
	if r.Res >= 0 {
		d.t.Fatalf("%s pending at close: Res %d, want -errno", opName(pending), r.Res)
	}
	r = d.next()
	d.expectOp(r, loop.OpClose, slot, gen)
	if r.Res != 0 {
		d.t.Fatalf("close: Res %d, want 0", r.Res)
	}
	d.expectNone(50*time.Millisecond, "after OpClose")
}

// expectPeerSeesEnd checks that the server side really was closed.
func expectPeerSeesEnd(t *testing.T, c *conn) {
	t.Helper()
	c.client.SetReadDeadline(time.Now().Add(hangGuard))
	if _, err := io.ReadAll(c.client); err != nil {
		// A close with unread bytes may reset instead: also an end.
		t.Logf("client read after close: %v", err)
	}
}

func testCloseWhileRecvPending(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	d.backend.QueueRecv(c.fd, 5, 9, make([]byte, 4096))
	d.expectNone(20*time.Millisecond, "recv with no data sent")
	d.backend.QueueClose(c.fd, 5, 9)
	c.closed = true
	expectCancelThenClose(d, loop.OpRecv, 5, 9)
	expectPeerSeesEnd(t, c)
}

func testCloseWhileSendPending(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	c.shrinkBuffers(t)
	d.backend.QueueSend(c.fd, 6, 2, pattern(4<<20))
	d.expectNone(50*time.Millisecond, "4 MiB send with the reader not reading")
	d.backend.QueueClose(c.fd, 6, 2)
	c.closed = true
	expectCancelThenClose(d, loop.OpSend, 6, 2)
	expectPeerSeesEnd(t, c)
}

// testGenerationAfterSlotReuse: a slot closed and reused for a new
// connection (maybe on the same fd number) before the loop waits again.
// Every completion carries the generation it was queued with.
func testGenerationAfterSlotReuse(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	l := listen(t)
	old := l.connect(t)
	d.queueRecv(old.fd, 1, 1, make([]byte, 4096))
	d.expectNone(20*time.Millisecond, "recv with no data sent")
	// Dial before the close and accept after it, so that on a backend
	// that closes at once the new socket takes the old fd number.
	client := l.dial(t)
	d.backend.QueueClose(old.fd, 1, 1)
	old.closed = true
	fresh := &conn{fd: l.acceptRaw(t), client: client}
	t.Cleanup(func() { unix.Close(fresh.fd) })
	t.Logf("old fd %d, new fd %d", old.fd, fresh.fd)
	message := []byte("for generation 2")
	if _, err := fresh.client.Write(message); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	d.backend.QueueRecv(fresh.fd, 1, 2, buf)

	var oldRecv, oldClose bool
	var got []byte
	// The old generation owes a failed recv, then OpClose; the new one
	// owes the message. The two streams may interleave.
	for len(got) < len(message) || !oldClose {
		r := d.nextFor(fmt.Sprintf("(so far: old recv cancelled %v, old OpClose %v, %d of %d bytes for the new generation)",
			oldRecv, oldClose, len(got), len(message)))
		switch {
		case r.Gen == 1 && r.Op == loop.OpRecv && !oldRecv:
			if r.Res >= 0 {
				t.Fatalf("cancelled recv: Res %d, want -errno", r.Res)
			}
			oldRecv = true
		case r.Gen == 1 && r.Op == loop.OpClose && oldRecv && !oldClose:
			oldClose = true
		case r.Gen == 2 && r.Op == loop.OpRecv && r.Slot == 1 && r.Res > 0 && len(got) < len(message):
			checkRecvData(t, r, buf)
			got = append(got, r.Data...)
			if len(got) < len(message) && !r.More {
				d.backend.QueueRecv(fresh.fd, 1, 2, buf)
			}
		default:
			t.Fatalf("unexpected %s (old recv seen %v, old close seen %v, %d bytes for the new)",
				describe(r), oldRecv, oldClose, len(got))
		}
	}
	if string(got) != string(message) {
		t.Fatalf("generation 2 got %q, want %q", got, message)
	}
	d.expectNone(50*time.Millisecond, "after everything owed")
}
