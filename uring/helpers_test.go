//go:build linux

package uring

import (
	"bytes"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// combos is every feature combination the tests run under: all on, each
// off alone, and all off.
var combos = []struct{ name, disable string }{
	{"all", ""},
	{"no_defer_taskrun", "defer_taskrun"},
	{"no_taskrun_modes", "defer_taskrun,coop_taskrun"},
	{"no_multishot_accept", "multishot_accept"},
	{"no_multishot_recv", "multishot_recv"},
	{"no_buf_ring", "buf_ring"},
	{"no_cancel_fd", "cancel_fd"},
	{"no_direct_send", "direct_send"},
	{"none", "defer_taskrun,coop_taskrun,multishot_accept,multishot_recv,buf_ring,cancel_fd,direct_send"},
}

// hangGuard bounds how long a test waits for a completion: only to turn a
// hang into a failure, never to judge speed.
const hangGuard = 20 * time.Second

// forEachCombo runs test as a subtest under every combination, each on its
// own locked OS thread with its own backend, as the loop runs it. If
// io_uring cannot be set up the test fails with the reason: it must not
// skip.
func forEachCombo(t *testing.T, opts Options, test func(t *testing.T, b *Backend)) {
	for _, combo := range combos {
		t.Run(combo.name, func(t *testing.T) {
			o := opts
			o.Disable = combo.disable
			test(t, newBackend(t, o))
		})
	}
}

func newBackend(t testing.TB, opts Options) *Backend {
	t.Helper()
	// The ring is SINGLE_ISSUER: created and driven on one OS thread.
	// The goroutine ends with the test, and the locked thread with it.
	runtime.LockOSThread()
	b, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// listen opens a non-blocking loopback listener and returns its fd and
// address.
func listen(t testing.TB) (int, string) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	if err := unix.Listen(fd, 1024); err != nil {
		t.Fatalf("listen: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return fd, "127.0.0.1:" + strconv.Itoa(sa.(*unix.SockaddrInet4).Port)
}

// collect waits for completions until match accepts one, and returns every
// completion seen up to and including it, with Data copied (a provided
// buffer is valid only until the next Wait).
func collect(t testing.TB, b *Backend, match func(c loop.Completion) bool) []loop.Completion {
	t.Helper()
	var seen []loop.Completion
	for i, c := range backlog[b] {
		seen = append(seen, c)
		if match(c) {
			backlog[b] = backlog[b][i+1:]
			return seen
		}
	}
	delete(backlog, b)
	out := make([]loop.Completion, 16)
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		n, err := b.Wait(out, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		for i, c := range out[:n] {
			c.Data = bytes.Clone(c.Data)
			seen = append(seen, c)
			if match(c) {
				// Keep what followed the match in this batch for the
				// next collect.
				for _, rest := range out[i+1 : n] {
					rest.Data = bytes.Clone(rest.Data)
					backlog[b] = append(backlog[b], rest)
				}
				return seen
			}
		}
	}
	t.Fatalf("no matching completion within %v; saw %+v", hangGuard, seen)
	return nil
}

// backlog holds completions a collect read past its match, per backend.
// Tests in this package do not run in parallel.
var backlog = map[*Backend][]loop.Completion{}

// accept dials addr and returns the server-side fd the backend accepted
// (QueueAccept must be armed) and the client connection.
func accept(t testing.TB, b *Backend, addr string) (int, *net.TCPConn) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpAccept })
	c := seen[len(seen)-1]
	if c.Res < 0 {
		t.Fatalf("accept: %v", unix.Errno(-c.Res))
	}
	fd := int(c.Res)
	t.Cleanup(func() { unix.Close(fd) })
	// As the loop does: without it Nagle's algorithm and the peer's
	// delayed ACK stall each short send for 40 ms.
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		t.Fatalf("TCP_NODELAY: %v", err)
	}
	return fd, conn.(*net.TCPConn)
}

// receive queues receives on fd until want bytes came or the stream ended,
// re-queueing as the loop does when a completion reports More false with
// data or -ENOBUFS. It returns the bytes and every completion.
func receive(t testing.TB, b *Backend, fd int, slot, gen uint32, buf []byte, want int) ([]byte, []loop.Completion) {
	t.Helper()
	var got []byte
	var all []loop.Completion
	b.QueueRecv(fd, slot, gen, buf)
	for len(got) < want {
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpRecv && c.Slot == slot })
		c := seen[len(seen)-1]
		all = append(all, c)
		switch {
		case c.Res > 0:
			got = append(got, c.Data...)
		case c.Res == 0:
			return got, all
		case c.Res == -int32(unix.ENOBUFS):
		default:
			t.Fatalf("recv: %v", unix.Errno(-c.Res))
		}
		if !c.More && len(got) < want {
			b.QueueRecv(fd, slot, gen, buf)
		}
	}
	return got, all
}

func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i/251)
	}
	return p
}
