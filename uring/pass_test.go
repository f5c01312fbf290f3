//go:build linux

package uring

import (
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// loopbackPair returns the two ends of a loopback TCP connection, both
// non-blocking, with TCP_NODELAY as the loop sets it.
func loopbackPair(t testing.TB) (int, int) {
	t.Helper()
	listenFD, _ := listen(t)
	sa, err := unix.Getsockname(listenFD)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	client, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { unix.Close(client) })
	if err := unix.Connect(client, sa); err != nil {
		t.Fatalf("connect: %v", err)
	}
	var server int
	for {
		server, _, err = unix.Accept4(listenFD, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != unix.EAGAIN {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	t.Cleanup(func() { unix.Close(server) })
	if err := unix.SetNonblock(client, true); err != nil {
		t.Fatalf("nonblock: %v", err)
	}
	for _, fd := range []int{client, server} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			t.Fatalf("TCP_NODELAY: %v", err)
		}
	}
	return client, server
}

// passRig drives the steady state of one keep-alive connection: a send on
// one end and the receive of it on the other, as a request and its bytes
// arriving would, with the loop's re-queue rules.
type passRig struct {
	b          *Backend
	sender     int
	receiver   int
	message    []byte
	recvBuf    []byte
	out        []loop.Completion
	recvArmed  bool
	failure    string
	failureRes int32
}

const (
	senderSlot   = 1
	receiverSlot = 2
)

func newPassRig(t testing.TB, b *Backend) *passRig {
	sender, receiver := loopbackPair(t)
	return &passRig{
		b:        b,
		sender:   sender,
		receiver: receiver,
		message:  pattern(128),
		recvBuf:  make([]byte, 4096),
		out:      make([]loop.Completion, 64),
	}
}

// pass sends the message and waits until it is sent and received. It
// reports failure in r.failure rather than through t, so that it can run
// inside testing.AllocsPerRun and a benchmark loop.
func (r *passRig) pass() {
	r.b.QueueSend(r.sender, senderSlot, 1, r.message)
	if !r.recvArmed {
		r.b.QueueRecv(r.receiver, receiverSlot, 1, r.recvBuf)
		r.recvArmed = true
	}
	sent, received := false, 0
	for !sent || received < len(r.message) {
		n, err := r.b.Wait(r.out, time.Second)
		if err != nil {
			r.failure = err.Error()
			return
		}
		for _, c := range r.out[:n] {
			switch {
			case c.Op == loop.OpSend && c.Res == int32(len(r.message)):
				sent = true
			case c.Op == loop.OpRecv && c.Res > 0:
				received += int(c.Res)
				if !c.More {
					r.recvArmed = false
				}
			case c.Op == loop.OpRecv && c.Res == -int32(unix.ENOBUFS):
				r.recvArmed = false
			default:
				r.failure, r.failureRes = "unexpected completion", c.Res
				return
			}
		}
		if !r.recvArmed && received < len(r.message) {
			r.b.QueueRecv(r.receiver, receiverSlot, 1, r.recvBuf)
			r.recvArmed = true
		}
	}
}

// The request path allocates nothing in steady state: a pass of send,
// receive and Wait, under every feature combination.
func TestPassAllocatesNothing(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		rig := newPassRig(t, b)
		for range 100 { // warm up: slot table, held list
			rig.pass()
		}
		allocs := testing.AllocsPerRun(1000, rig.pass)
		if rig.failure != "" {
			t.Fatalf("pass: %s (Res %d)", rig.failure, rig.failureRes)
		}
		if allocs != 0 {
			t.Fatalf("%v allocations per pass, want 0 (%s)", allocs, b.Name())
		}
	})
}

func BenchmarkPass(b *testing.B) {
	for _, combo := range combos {
		b.Run(combo.name, func(b *testing.B) {
			backend := newBackend(b, Options{Disable: combo.disable})
			rig := newPassRig(b, backend)
			rig.pass()
			b.ReportAllocs()
			for b.Loop() {
				rig.pass()
			}
			if rig.failure != "" {
				b.Fatalf("pass: %s (Res %d)", rig.failure, rig.failureRes)
			}
		})
	}
}
