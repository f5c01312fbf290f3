//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// idleConnections is how many WebSockets TestWebSocketIdle holds open.
const idleConnections = 10000

// TestWebSocketIdle holds 10 000 idle WebSockets open on --native ws-echo
// and on an ASGI echo app, checks a sample of them still echoes, and
// reports the server's RSS per connection (bounded far above the few KiB
// it should be).
func TestWebSocketIdle(t *testing.T) {
	raiseOpenFileLimit(t, idleConnections+1024)
	// The default --max-connections is 10 000: room for the probes too.
	limit := "--max-connections=" + strconv.Itoa(idleConnections+100)
	t.Run("native", func(t *testing.T) {
		s := start(t, variants[0], "--native", "ws-echo", limit)
		holdIdle(t, s.addr, s.cmd.Process.Pid)
	})
	t.Run("ASGI", func(t *testing.T) {
		s := startASGI(t, variants[0], "asgi_ws_echo_app:app", limit)
		holdIdle(t, s.addr, s.cmd.Process.Pid)
	})
}

// raiseOpenFileLimit raises this process's open-file limit to at least
// need (the server, started after, inherits it), or skips the test.
func raiseOpenFileLimit(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= need {
		return
	}
	raised := lim
	raised.Cur = need
	raised.Max = max(lim.Max, need)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		t.Skipf("SKIPPED, NOT PASSED: %d idle WebSockets need an open-file limit of %d, and it cannot be raised from %d/%d: %v",
			idleConnections, need, lim.Cur, lim.Max, err)
	}
}

// holdIdle opens idleConnections WebSockets to addr, checks every 100th
// still echoes once all are open, and logs the RSS of pid per connection.
func holdIdle(t *testing.T, addr string, pid int) {
	// One connection first, so that what a first connection loads (the
	// app's first call, buffers) is not counted per connection.
	first := idleDial(addr)
	if first.err != nil {
		t.Fatal(first.err)
	}
	defer first.conn.Close()
	if err := idleEcho(first); err != nil {
		t.Fatal(err)
	}
	before := processRSS(t, pid)

	conns := make([]idleConn, idleConnections)
	inParallel(len(conns), 32, func(i int) { conns[i] = idleDial(addr) })
	defer func() {
		for _, c := range conns {
			if c.conn != nil {
				c.conn.Close()
			}
		}
	}()
	for i, c := range conns {
		if c.err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, idleConnections, c.err)
		}
	}
	after := processRSS(t, pid)
	for i := 0; i < len(conns); i += 100 {
		if err := idleEcho(conns[i]); err != nil {
			t.Fatalf("connection %d after all %d were open: %v", i+1, idleConnections, err)
		}
	}
	perConnection := float64(after-before) / idleConnections
	t.Logf("%d idle WebSockets: server RSS %d MiB -> %d MiB, %.1f KiB per connection",
		idleConnections, before>>20, after>>20, perConnection/1024)
	// A few KiB is the design (no compressor kept per connection); a
	// flate writer each would be about 1 MiB.
	if perConnection > 64<<10 {
		t.Fatalf("%.0f KiB of RSS per idle WebSocket, want a few", perConnection/1024)
	}
}

// idleConn is one open WebSocket (a raw TCP connection after its 101).
type idleConn struct {
	conn net.Conn
	br   *bufio.Reader
	err  error
}

// idleDial opens a WebSocket offering permessage-deflate, as browsers do:
// what the server keeps for it counts in the RSS per connection.
func idleDial(addr string) idleConn {
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return idleConn{err: err}
	}
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
	br := bufio.NewReaderSize(conn, 512)
	resp, err := http.ReadResponse(br, nil)
	switch {
	case err != nil:
	case resp.StatusCode != http.StatusSwitchingProtocols:
		err = fmt.Errorf("upgrade: status %d", resp.StatusCode)
	case !strings.HasPrefix(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate"):
		err = fmt.Errorf("upgrade: permessage-deflate not accepted: %q", resp.Header.Get("Sec-WebSocket-Extensions"))
	}
	if err != nil {
		conn.Close()
		return idleConn{err: err}
	}
	conn.SetDeadline(time.Time{})
	return idleConn{conn: conn, br: br}
}

// idleEcho sends a short masked text frame and wants it back (under 512
// bytes, it comes back uncompressed).
func idleEcho(c idleConn) error {
	c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	defer c.conn.SetDeadline(time.Time{})
	// "ping" masked with the key 0: the key is any 32 bits.
	if _, err := c.conn.Write([]byte{0x81, 0x84, 0, 0, 0, 0, 'p', 'i', 'n', 'g'}); err != nil {
		return err
	}
	var reply [6]byte
	if _, err := io.ReadFull(c.br, reply[:]); err != nil {
		return err
	}
	if string(reply[:]) != "\x81\x04ping" {
		return fmt.Errorf("echo %q", reply[:])
	}
	return nil
}
