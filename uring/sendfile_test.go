//go:build linux

package uring

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

func openTestFile(t *testing.T, data []byte) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "body.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// A file send reuses one pipe pair: after two sends on one connection a
// single pair is open, idle on the free list; a send ended by a client
// that left closes its pair (it may hold stale bytes) instead of keeping
// it, so no pair leaks either way; Close closes the idle ones.
func TestSendFilePipes(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		data := pattern(3 << 20)
		fd, client := accept(t, b, addr)
		for round := 0; round < 2; round++ {
			received := make(chan []byte, 1)
			go func() {
				client.SetReadDeadline(time.Now().Add(hangGuard))
				got := make([]byte, len(data)-100)
				n, _ := io.ReadFull(client, got)
				received <- got[:n]
			}()
			b.QueueSendFile(fd, 1, 1, openTestFile(t, data), 100, int64(len(data)-100))
			seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpSend })
			if c := seen[len(seen)-1]; c.Res != 0 {
				t.Fatalf("round %d: file send Res %d, want 0", round, c.Res)
			}
			if got := <-received; !bytes.Equal(got, data[100:]) {
				t.Fatalf("round %d: client got %d bytes, not the range", round, len(got))
			}
			if b.pipesOpen != 1 || len(b.pipes) != 1 {
				t.Fatalf("round %d: %d pipe pairs open, %d idle; want 1 and 1", round, b.pipesOpen, len(b.pipes))
			}
		}

		gone, leaver := accept(t, b, addr)
		leaver.SetReadBuffer(32 << 10)
		b.QueueSendFile(gone, 2, 1, openTestFile(t, pattern(16<<20)), 0, 16<<20)
		go func() {
			leaver.SetReadDeadline(time.Now().Add(hangGuard))
			io.ReadFull(leaver, make([]byte, 64<<10))
			leaver.SetLinger(0)
			leaver.Close()
		}()
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpSend && c.Slot == 2 })
		if c := seen[len(seen)-1]; c.Res >= 0 {
			t.Fatalf("file send to a client that left: Res %d, want -errno", c.Res)
		}
		if b.pipesOpen != len(b.pipes) {
			t.Fatalf("after a client left: %d pipe pairs open, %d idle; a pair leaked", b.pipesOpen, len(b.pipes))
		}
		b.closeFiles()
		if b.pipesOpen != 0 {
			t.Fatalf("after closeFiles: %d pipe pairs open", b.pipesOpen)
		}
	})
}

// A file send to a client that is not reading fills the socket, waits for
// room (the -EAGAIN splice and its POLLOUT poll) instead of completing or
// spinning, and finishes byte-exact once the client reads.
func TestSendFileWaitsForRoom(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		listenFD, addr := listen(t)
		b.QueueAccept(listenFD)
		fd, client := accept(t, b, addr)
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 32<<10); err != nil {
			t.Fatal(err)
		}
		client.SetReadBuffer(32 << 10)
		data := pattern(4 << 20)
		b.QueueSendFile(fd, 1, 1, openTestFile(t, data), 0, int64(len(data)))
		out := make([]loop.Completion, 8)
		if n, err := b.Wait(out, 100*time.Millisecond); err != nil || n != 0 {
			t.Fatalf("Wait with the client not reading: %d completions (%v), want none", n, err)
		}
		received := make(chan []byte, 1)
		go func() {
			client.SetReadDeadline(time.Now().Add(hangGuard))
			got := make([]byte, len(data))
			n, _ := io.ReadFull(client, got)
			received <- got[:n]
		}()
		seen := collect(t, b, func(c loop.Completion) bool { return c.Op == loop.OpSend })
		if c := seen[len(seen)-1]; c.Res != 0 {
			t.Fatalf("file send Res %d, want 0", c.Res)
		}
		if got := <-received; !bytes.Equal(got, data) {
			t.Fatalf("client got %d bytes, not the file", len(got))
		}
		if b.filePolls == 0 {
			t.Fatal("the socket never filled: the wait for room was not exercised")
		}
	})
}
