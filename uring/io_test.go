//go:build linux

package uring

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

func TestAcceptMany(t *testing.T) {
	const clients = 100
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		type dialResult struct {
			conn net.Conn
			err  error
		}
		dialed := make(chan dialResult, clients)
		for range clients {
			go func() {
				c, err := net.Dial("tcp", addr)
				dialed <- dialResult{c, err}
			}()
		}
		accepted := map[int]bool{}
		collect(t, b, func(c loop.Completion) bool {
			if c.Op != loop.OpAccept {
				return false
			}
			if c.Res < 0 {
				t.Fatalf("accept: %v", unix.Errno(-c.Res))
			}
			if !c.More {
				t.Fatalf("accept completion %+v: More false while accepting", c)
			}
			fd := int(c.Res)
			if accepted[fd] {
				t.Fatalf("fd %d accepted twice", fd)
			}
			accepted[fd] = true
			flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			if err != nil || flags&unix.O_NONBLOCK == 0 {
				t.Fatalf("accepted fd %d: flags %#x, %v; want O_NONBLOCK", fd, flags, err)
			}
			return len(accepted) == clients
		})
		for fd := range accepted {
			unix.Close(fd)
		}
		for range clients {
			r := <-dialed
			if r.err != nil {
				t.Fatalf("dial: %v", r.err)
			}
			r.conn.Close()
		}
	})
}

func TestStopAcceptThenAcceptAgain(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		b.QueueAccept(listenFD) // again while armed: still one arm
		accept(t, b, addr)
		b.StopAccept()
		// Once the cancel is submitted no connection is accepted; before
		// that the kernel may still take one (the contract allows it).
		if _, err := b.Wait(nil, 0); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		conn, err := net.Dial("tcp", addr) // completes in the listen backlog
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer conn.Close()
		out := make([]loop.Completion, 8)
		stopped := 0
		for range 5 {
			n, err := b.Wait(out, 10*time.Millisecond)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			for _, c := range out[:n] {
				if c.Op == loop.OpAcceptStopped {
					stopped++
					continue
				}
				t.Fatalf("completion %+v after StopAccept", c)
			}
		}
		if stopped != 1 {
			t.Fatalf("%d OpAcceptStopped after StopAccept, want 1", stopped)
		}
		b.QueueAccept(listenFD)
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpAccept })
		if c := seen[len(seen)-1]; c.Res < 0 || !c.More {
			t.Fatalf("accept after re-arming: %+v", c)
		}
		unix.Close(int(seen[len(seen)-1].Res))
	})
}

func TestRecvDeliversTheStream(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		want := pattern(50000)
		go func() {
			for rest := want; len(rest) > 0; {
				n := min(len(rest), 7000)
				conn.Write(rest[:n])
				rest = rest[n:]
			}
		}()
		slotBuf := make([]byte, 1500)
		got, completions := receive(t, b, fd, 3, 9, slotBuf, len(want))
		if !bytes.Equal(got, want) {
			t.Fatalf("received %d bytes, not the %d sent (first difference matters)", len(got), len(want))
		}
		provided := b.features&featureBufRing != 0
		for _, c := range completions {
			if c.Slot != 3 || c.Gen != 9 {
				t.Fatalf("completion %+v: want slot 3 gen 9", c)
			}
			if c.Res > 0 && c.Provided != provided {
				t.Fatalf("completion %+v: Provided %v, want %v (%s)", c, c.Provided, provided, b.Name())
			}
			if c.More && b.features&featureMultishotRecv == 0 {
				t.Fatalf("completion %+v: More without multishot recv", c)
			}
		}
	})
}

// With two provided buffers and more data waiting than they hold, a
// multishot receive runs dry: it must say so (-ENOBUFS, More false), lose
// nothing, and go on once queued again.
func TestRecvBufferRingRunsDry(t *testing.T) {
	forEachCombo(t, Options{BufferCount: 2, BufferSize: 4096}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		want := pattern(64 << 10)
		if _, err := conn.Write(want); err != nil {
			t.Fatalf("write: %v", err)
		}
		got, completions := receive(t, b, fd, 1, 1, make([]byte, 4096), len(want))
		if !bytes.Equal(got, want) {
			t.Fatalf("received %d bytes, not the %d sent", len(got), len(want))
		}
		dry := 0
		for _, c := range completions {
			if c.Res == -int32(unix.ENOBUFS) {
				dry++
				if c.More {
					t.Fatalf("ENOBUFS completion %+v with More", c)
				}
			}
		}
		if b.features&featureMultishotRecv != 0 && dry == 0 {
			t.Fatalf("multishot recv over 2 buffers took 64 KiB without ENOBUFS: %d completions", len(completions))
		}
		if b.features&featureMultishotRecv == 0 && dry != 0 {
			t.Fatalf("single-shot recv reported ENOBUFS %d times", dry)
		}
	})
}

// A 4 MiB send to a reader that takes small bites, through a send buffer of
// 128 KiB (SO_SNDBUF 64 KiB, doubled by the kernel), is written in many
// short sends the backend resumes itself; the loop sees one completion for
// all of it. (A smaller send buffer makes segments shorter than the MSS,
// which the peer ACKs only after its 40 ms delayed-ACK timer.)
func TestSendLargeToSlowReader(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 65536); err != nil {
			t.Fatalf("SO_SNDBUF: %v", err)
		}
		want := pattern(4 << 20)
		received := make(chan []byte, 1)
		go func() {
			var got []byte
			bite := make([]byte, 3000)
			for len(got) < len(want) {
				n, err := conn.Read(bite)
				got = append(got, bite[:n]...)
				if err != nil {
					break
				}
			}
			received <- got
		}()
		resumesBefore := b.sendResumes
		b.QueueSend(fd, 5, 2, want)
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpSend })
		c := seen[len(seen)-1]
		if c.Res != int32(len(want)) || c.Slot != 5 || c.Gen != 2 {
			t.Fatalf("send completion %+v, want Res %d slot 5 gen 2", c, len(want))
		}
		if !bytes.Equal(<-received, want) {
			t.Fatal("reader did not receive the 4 MiB sent")
		}
		if b.sendResumes == resumesBefore {
			t.Fatal("no short send was resumed: the test did not exercise the path it is for")
		}
		t.Logf("%d short sends resumed", b.sendResumes-resumesBefore)
	})
}

func TestPeerResetGivesNegativeRes(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		b.QueueRecv(fd, 1, 1, make([]byte, 512))
		if _, err := b.Wait(nil, 0); err != nil { // the receive is armed
			t.Fatalf("Wait: %v", err)
		}
		conn.SetLinger(0) // close sends RST
		conn.Close()
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpRecv })
		if c := seen[len(seen)-1]; c.Res != -int32(unix.ECONNRESET) || c.More {
			t.Fatalf("recv after reset: %+v, want Res -ECONNRESET, More false", c)
		}
		b.QueueSend(fd, 1, 1, []byte("too late"))
		seen = collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpSend })
		if c := seen[len(seen)-1]; c.Res >= 0 {
			t.Fatalf("send to a reset peer: %+v, want a negative Res", c)
		}
	})
}

func TestHalfCloseThenReply(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		conn.Write([]byte("ping"))
		conn.CloseWrite()
		got, completions := receive(t, b, fd, 2, 1, make([]byte, 64), 1<<20)
		if string(got) != "ping" {
			t.Fatalf("received %q, want \"ping\"", got)
		}
		if last := completions[len(completions)-1]; last.Res != 0 || last.More {
			t.Fatalf("last receive %+v, want Res 0 (end of stream), More false", last)
		}
		b.QueueSend(fd, 2, 1, []byte("pong"))
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpSend })
		if c := seen[len(seen)-1]; c.Res != 4 {
			t.Fatalf("send after half-close: %+v", c)
		}
		reply, err := io.ReadAll(io.LimitReader(conn, 4))
		if err != nil || string(reply) != "pong" {
			t.Fatalf("client read %q, %v; want \"pong\"", reply, err)
		}
	})
}

// A loop written for single-shot receives queues one after every
// completion; with multishot receive armed, that must not arm a second
// receive (which would report end of stream twice).
func TestRecvQueuedAfterEveryCompletion(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		buf := make([]byte, 64)
		isRecv := func(c loop.Completion) bool { return c.Op == loop.OpRecv }
		for _, word := range []string{"one", "two"} {
			b.QueueRecv(fd, 1, 1, buf)
			conn.Write([]byte(word))
			seen := collect(t, b, isRecv)
			if c := seen[len(seen)-1]; string(c.Data) != word {
				t.Fatalf("received %+v, want %q", c, word)
			}
		}
		b.QueueRecv(fd, 1, 1, buf)
		conn.CloseWrite()
		seen := collect(t, b, isRecv)
		if c := seen[len(seen)-1]; c.Res != 0 || c.More {
			t.Fatalf("at end of stream: %+v, want Res 0, More false", c)
		}
		out := make([]loop.Completion, 8)
		for range 3 {
			n, err := b.Wait(out, 10*time.Millisecond)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			for _, c := range out[:n] {
				t.Fatalf("completion %+v after end of stream: a receive was armed twice", c)
			}
		}
	})
}

// CancelRecv pauses a multishot receive (the loop's back-pressure): the
// armed receive ends with More false, bytes sent meanwhile stay in the
// socket, and a new QueueRecv delivers them.
func TestCancelRecvPausesMultishot(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		var _ loop.RecvCanceler = b
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, conn := accept(t, b, addr)
		slotBuf := make([]byte, 4096)
		first := []byte("before the pause")
		conn.Write(first)
		got, _ := receive(t, b, fd, 2, 5, slotBuf, len(first))
		if !bytes.Equal(got, first) {
			t.Fatalf("received %q, want %q", got, first)
		}
		b.CancelRecv(fd, 2, 5)
		if b.features&featureMultishotRecv != 0 {
			ended := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpRecv && !c.More })
			if c := ended[len(ended)-1]; c.Res != -int32(unix.ECANCELED) && c.Res <= 0 {
				t.Fatalf("cancelled receive ended with %+v, want -ECANCELED or data", c)
			}
		}
		second := pattern(3000)
		conn.Write(second)
		got, _ = receive(t, b, fd, 2, 5, slotBuf, len(second))
		if !bytes.Equal(got, second) {
			t.Fatalf("after the pause received %d bytes, want the %d sent", len(got), len(second))
		}
		conn.Close()
		unix.Close(fd)
	})
}
