package backendtest

import (
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listener is a raw, non-blocking loopback TCP listening socket, made with
// unix calls rather than net.Listen: File() on a net listener returns a dup
// that shares (and flips) the original's blocking mode.
type listener struct {
	fd   int
	addr string
}

func listen(t *testing.T) *listener {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	unix.CloseOnExec(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		t.Fatalf("SO_REUSEADDR: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	if err := unix.Listen(fd, 1024); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatalf("set non-blocking: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	port := sa.(*unix.SockaddrInet4).Port
	return &listener{fd: fd, addr: "127.0.0.1:" + strconv.Itoa(port)}
}

// conn is one loopback connection: the server side as a raw non-blocking
// fd for the backend, the client side as a net.TCPConn for the test.
type conn struct {
	fd     int
	client *net.TCPConn
	closed bool // the backend was asked to close fd
}

// acceptRaw takes one connection off l without the backend under test.
func (l *listener) acceptRaw(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		fd, _, err := unix.Accept(l.fd)
		if err == nil {
			unix.CloseOnExec(fd)
			if err := unix.SetNonblock(fd, true); err != nil {
				t.Fatalf("set non-blocking: %v", err)
			}
			return fd
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			t.Fatalf("accept: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection to accept within %v", hangGuard)
		}
		time.Sleep(time.Millisecond)
	}
}

func (l *listener) dial(t *testing.T) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", l.addr)
	if err != nil {
		t.Fatalf("dial %s: %v", l.addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// connect makes one connection on l.
func (l *listener) connect(t *testing.T) *conn {
	t.Helper()
	client := l.dial(t)
	c := &conn{fd: l.acceptRaw(t), client: client}
	t.Cleanup(func() {
		if !c.closed {
			unix.Close(c.fd)
		}
	})
	return c
}

func connect(t *testing.T) *conn {
	t.Helper()
	return listen(t).connect(t)
}

// shrinkBuffers makes the kernel buffers between the two ends small, so a
// few hundred KiB already fill them and a large send must stop part way.
func (c *conn) shrinkBuffers(t *testing.T) {
	t.Helper()
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 32<<10); err != nil {
		t.Fatalf("SO_SNDBUF: %v", err)
	}
	if err := c.client.SetReadBuffer(32 << 10); err != nil {
		t.Fatalf("SO_RCVBUF: %v", err)
	}
}

// pattern is n bytes that differ from their neighbours, so a lost,
// repeated or reordered chunk shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}
