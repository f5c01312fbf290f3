package backendtest

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// openedFile writes data to a temporary file and opens it; the test hands
// the descriptor to QueueSendFile, which takes it.
type openedFile struct {
	fd  int
	dev uint64
	ino uint64
}

func openFile(t *testing.T, data []byte) openedFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "body.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatalf("fstat: %v", err)
	}
	return openedFile{fd: fd, dev: uint64(st.Dev), ino: st.Ino}
}

// expectClosed fails unless the backend has closed the file: its number
// is free, or names something else (reused since).
func (f openedFile) expectClosed(t *testing.T) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err == nil && uint64(st.Dev) == f.dev && st.Ino == f.ino {
		unix.Close(f.fd)
		t.Fatalf("file descriptor %d still open after its send completed", f.fd)
	}
}

// readAll reads n bytes (or until end or error) from the client side in
// the background, slowly when slow is set.
func readAll(c *conn, n int, slow bool) <-chan []byte {
	received := make(chan []byte, 1)
	go func() {
		got := make([]byte, 0, n)
		chunk := make([]byte, 16<<10)
		c.client.SetReadDeadline(time.Now().Add(hangGuard))
		for reads := 1; len(got) < n; reads++ {
			k, err := c.client.Read(chunk[:min(len(chunk), n-len(got))])
			got = append(got, chunk[:k]...)
			if err != nil {
				break
			}
			if slow && reads%16 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		received <- got
	}()
	return received
}

// testSendFileRange: a range from an offset, shorter than the file, with
// a reader slower than the socket, arrives byte-exact; the file is closed
// by the time the completion (Res 0) is handed out; the next plain send on
// the socket follows it in order.
func testSendFileRange(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	const offset, length = 12345, 3<<20 + 77
	data := pattern(4 << 20)
	f := openFile(t, data)
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	c.shrinkBuffers(t)
	received := readAll(c, length+4, true)
	d.backend.QueueSendFile(c.fd, 2, 3, f.fd, offset, length)
	r := d.nextFor("(file send)")
	d.expectOp(r, loop.OpSend, 2, 3)
	if r.Res != 0 {
		t.Fatalf("file send Res %d, want 0", r.Res)
	}
	f.expectClosed(t)
	d.backend.QueueSend(c.fd, 2, 3, []byte("tail"))
	r = d.next()
	d.expectOp(r, loop.OpSend, 2, 3)
	if r.Res != 4 {
		t.Fatalf("tail send Res %d, want 4", r.Res)
	}
	got := <-received
	if len(got) != length+4 || !bytes.Equal(got[:length], data[offset:offset+length]) || string(got[length:]) != "tail" {
		t.Fatalf("reader got %d bytes, not the %d of the range and the tail in order", len(got), length+4)
	}
}

// testSendFileShort: a range past the end of the file completes with
// -FileEnded once what the file has is sent, and the file is closed.
func testSendFileShort(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	data := pattern(100 << 10)
	f := openFile(t, data)
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	received := readAll(c, len(data), false)
	d.backend.QueueSendFile(c.fd, 4, 1, f.fd, 0, int64(len(data))+1000)
	r := d.nextFor("(file send past the end of the file)")
	d.expectOp(r, loop.OpSend, 4, 1)
	if r.Res != -int32(loop.FileEnded) {
		t.Fatalf("short file send Res %d, want -FileEnded (%d)", r.Res, -int32(loop.FileEnded))
	}
	f.expectClosed(t)
	if got := <-received; !bytes.Equal(got, data) {
		t.Fatalf("reader got %d bytes, want the file's %d", len(got), len(data))
	}
}

// testCloseWhileSendFilePending: QueueClose cancels a file send a reader
// stopped taking: the send completes with -errno, then OpClose, and the
// file is closed.
func testCloseWhileSendFilePending(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	f := openFile(t, pattern(8<<20))
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	c.shrinkBuffers(t)
	d.backend.QueueSendFile(c.fd, 6, 2, f.fd, 0, 8<<20)
	d.expectNone(50*time.Millisecond, "8 MiB file send with the reader not reading")
	d.backend.QueueClose(c.fd, 6, 2)
	c.closed = true
	expectCancelThenClose(d, loop.OpSend, 6, 2)
	f.expectClosed(t)
	expectPeerSeesEnd(t, c)
}

// testSendFilePeerGone: the client leaves part way through a file send:
// it completes with -errno (EPIPE, ECONNRESET) and closes the file.
func testSendFilePeerGone(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	f := openFile(t, pattern(8<<20))
	d := newDriver(t, newBackend, 8)
	c := connect(t)
	c.shrinkBuffers(t)
	d.backend.QueueSendFile(c.fd, 7, 1, f.fd, 0, 8<<20)
	// Read a little, then leave with unread bytes: the kernel resets. The
	// test goroutine drives the backend meanwhile.
	readErr := make(chan error, 1)
	go func() {
		c.client.SetReadDeadline(time.Now().Add(hangGuard))
		_, err := io.ReadFull(c.client, make([]byte, 64<<10))
		c.client.SetLinger(0)
		c.client.Close()
		readErr <- err
	}()
	r := d.nextFor("(file send to a client that left)")
	if err := <-readErr; err != nil {
		t.Fatalf("client read: %v", err)
	}
	d.expectOp(r, loop.OpSend, 7, 1)
	if r.Res >= 0 {
		t.Fatalf("file send to a client that left: Res %d, want -errno", r.Res)
	}
	f.expectClosed(t)
	d.backend.QueueClose(c.fd, 7, 1)
	c.closed = true
	d.expectOp(d.next(), loop.OpClose, 7, 1)
}
