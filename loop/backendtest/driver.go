package backendtest

import (
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
)

// hangGuard bounds every wait for a completion the contract promises. It
// is not a speed requirement: it turns a lost completion into a failure
// instead of a test binary killed by the go test timeout.
const hangGuard = 30 * time.Second

// pollStep is the timeout of each Wait inside a guarded wait.
const pollStep = 50 * time.Millisecond

// driver plays the loop: it calls Wait and hands out completions one by
// one, copying Provided data (valid only until the next Wait) first.
type driver struct {
	t       *testing.T
	backend loop.Backend
	out     []loop.Completion
	waiting []loop.Completion
	// recvArmed says, per slot, that the last recv completion said More:
	// a multishot receive still armed must not be queued again.
	recvArmed map[uint32]bool
}

func newDriver(t *testing.T, newBackend func(t *testing.T) loop.Backend, batch int) *driver {
	t.Helper()
	b := newBackend(t)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &driver{t: t, backend: b, out: make([]loop.Completion, batch), recvArmed: make(map[uint32]bool)}
}

// wait runs one Wait and keeps what it returns; it reports how many.
func (d *driver) wait(timeout time.Duration) int {
	d.t.Helper()
	n, err := d.backend.Wait(d.out, timeout)
	if err != nil {
		d.t.Fatalf("Wait: %v", err)
	}
	if n < 0 || n > len(d.out) {
		d.t.Fatalf("Wait returned %d for an out of length %d", n, len(d.out))
	}
	for _, c := range d.out[:n] {
		if c.Provided {
			c.Data = append([]byte(nil), c.Data...)
		}
		d.waiting = append(d.waiting, c)
	}
	return n
}

// next returns the next completion, failing the test when none comes
// within hangGuard.
func (d *driver) next() loop.Completion {
	d.t.Helper()
	return d.nextFor("")
}

// nextFor is next with a note of what the test waits for, for the
// failure message.
func (d *driver) nextFor(what string) loop.Completion {
	d.t.Helper()
	deadline := time.Now().Add(hangGuard)
	for len(d.waiting) == 0 {
		if time.Now().After(deadline) {
			d.t.Fatalf("no completion within %v %s", hangGuard, what)
		}
		d.wait(pollStep)
	}
	c := d.waiting[0]
	d.waiting = d.waiting[1:]
	switch c.Op {
	case loop.OpRecv:
		d.recvArmed[c.Slot] = c.More
	case loop.OpClose:
		delete(d.recvArmed, c.Slot)
	}
	return c
}

// queueRecv queues a recv unless the slot's multishot recv is still armed
// (the contract: queue again only after a completion with More false).
// The generation of completions is then the one the recv was armed with.
func (d *driver) queueRecv(fd int, slot, gen uint32, buf []byte) {
	if !d.recvArmed[slot] {
		d.backend.QueueRecv(fd, slot, gen, buf)
		d.recvArmed[slot] = true
	}
}

// expectNone waits for d and fails on any completion: it is for moments
// when the contract says nothing may complete (a recv with no data sent).
func (d *driver) expectNone(timeout time.Duration, why string) {
	d.t.Helper()
	if len(d.waiting) == 0 {
		d.wait(timeout)
	}
	if len(d.waiting) > 0 {
		d.t.Fatalf("%s: got completion %s, want none", why, describe(d.waiting[0]))
	}
}

// recvAll queues recvs into buf on slot/gen until want bytes arrived.
func (d *driver) recvAll(fd int, slot, gen uint32, buf []byte, want int) []byte {
	d.t.Helper()
	got := make([]byte, 0, want)
	for len(got) < want {
		d.queueRecv(fd, slot, gen, buf)
		c := d.next()
		d.expectOp(c, loop.OpRecv, slot, gen)
		if c.Res <= 0 {
			d.t.Fatalf("recv after %d of %d bytes: Res %d", len(got), want, c.Res)
		}
		checkRecvData(d.t, c, buf)
		got = append(got, c.Data...)
	}
	return got
}

func (d *driver) expectOp(c loop.Completion, op loop.Op, slot, gen uint32) {
	d.t.Helper()
	if c.Op != op || c.Slot != slot || c.Gen != gen {
		d.t.Fatalf("got %s, want op %s slot %d gen %d", describe(c), opName(op), slot, gen)
	}
}

// checkRecvData checks the Data of a positive OpRecv against the contract:
// Res bytes, in the front of the slot buffer unless Provided.
func checkRecvData(t *testing.T, c loop.Completion, buf []byte) {
	t.Helper()
	if int(c.Res) != len(c.Data) {
		t.Fatalf("recv Res %d but %d bytes of Data", c.Res, len(c.Data))
	}
	if c.Provided || c.Res == 0 {
		return
	}
	if len(c.Data) > len(buf) || &c.Data[0] != &buf[0] {
		t.Fatalf("recv Data is not the front of the slot buffer (Provided false)")
	}
}
