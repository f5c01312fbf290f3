//go:build linux

package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xhttp2 "golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestHTTP2Httpx: Python's httpx with h2 (tests/.venv) against the WSGI
// and the ASGI app, over TLS (h2 by ALPN) and h2c (prior knowledge,
// http1=False): a GET, a POST of 3 MiB, a streamed download, and
// requests at once from an AsyncClient under asyncio.gather, each
// answered over HTTP/2 with the right body.
func TestHTTP2Httpx(t *testing.T) {
	python := venvPython(t)
	for _, app := range []struct{ name, target, protocol string }{
		{"wsgi", "h2_app:application", "HTTP/2"},
		{"asgi", "h2_app:app", "2"},
	} {
		for _, useTLS := range []bool{false, true} {
			name := app.name + "/h2c"
			if useTLS {
				name = app.name + "/tls"
			}
			t.Run(name, func(t *testing.T) {
				s := startH2(t, wsgiVariant(), useTLS, app.target)
				args := []string{filepath.Join("tools", "httpx_h2_client.py"), s.url(""), app.protocol}
				if useTLS {
					args = append(args, s.ca.File)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				out, err := exec.CommandContext(ctx, python, args...).CombinedOutput()
				if err != nil {
					t.Fatalf("httpx_h2_client.py: %v\n%s", err, out)
				}
				checks := []string{"get", "post-3mib", "stream-download", "async-gather"}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				if len(lines) != len(checks) {
					t.Fatalf("httpx_h2_client.py printed:\n%s", out)
				}
				for i, name := range checks {
					if lines[i] != name+" ok" {
						t.Errorf("%s: %s", name, lines[i])
					}
				}
				checkNoTraceback(t, s.server)
			})
		}
	}
}

// TestHTTP2Attacks: the floods of issue 31 that need the whole server to
// show their cost, by raw frames over h2c against the real binary on
// io_uring and epoll. Each ends with another client served.
func TestHTTP2Attacks(t *testing.T) {
	for _, v := range []variant{variants[0], variants[1]} {
		t.Run(v.name, func(t *testing.T) {
			s := startH2(t, v, false, "--native", "echo")
			t.Run("settings-flood", func(t *testing.T) {
				// SETTINGS_ENABLE_PUSH 0, a setting that changes nothing.
				testH2ControlFlood(t, s, frameBytes(xhttp2.FrameSettings, 0, 0, []byte{0, 2, 0, 0, 0, 0}))
			})
			t.Run("ping-flood", func(t *testing.T) {
				testH2ControlFlood(t, s, frameBytes(xhttp2.FramePing, 0, 0, []byte("m0-flood")))
			})
			// MadeYouReset (CVE-2025-8671): frames that are stream errors,
			// so that the server is the one resetting open streams.
			t.Run("made-you-reset/window-update-0", func(t *testing.T) {
				testH2MadeYouReset(t, s, xhttp2.ErrCodeProtocol, func(c *h2Conn, id uint32) error {
					return c.fr.WriteWindowUpdate(id, 0)
				})
			})
			t.Run("made-you-reset/window-overflow", func(t *testing.T) {
				testH2MadeYouReset(t, s, xhttp2.ErrCodeFlowControl, func(c *h2Conn, id uint32) error {
					if err := c.fr.WriteWindowUpdate(id, 1<<31-1); err != nil {
						return err
					}
					return c.fr.WriteWindowUpdate(id, 1<<31-1)
				})
			})
			t.Run("made-you-reset/priority-self", func(t *testing.T) {
				testH2MadeYouReset(t, s, xhttp2.ErrCodeProtocol, func(c *h2Conn, id uint32) error {
					return c.fr.WritePriority(id, xhttp2.PriorityParam{StreamDep: id, Weight: 15})
				})
			})
			checkNoTraceback(t, s.server)
			// Its own server: --send-timeout's report is rate limited, and
			// the floods above must be ended by their own limits.
			held := startH2(t, v, false, "--native", "echo", "--send-timeout", "2s")
			t.Run("zero-window", func(t *testing.T) { testH2ZeroWindow(t, held) })
			checkNoTraceback(t, held.server)
		})
	}
}

// frameBytes is one frame as it goes on the wire.
func frameBytes(typ xhttp2.FrameType, flags xhttp2.Flags, id uint32, payload []byte) []byte {
	f := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), byte(typ), byte(flags),
		byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
	return append(f, payload...)
}

// rssKiB is a process's resident set (VmRSS in /proc/PID/status).
func rssKiB(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

const (
	// floodBytes is how much of one control frame a flood sends, unless
	// the server ends it first: ten times the acks' worth that loopback's
	// socket buffers can hold, so that a server queueing its acks in
	// memory would hold most of it.
	floodBytes = 128 << 20
	// floodRSSSlackKiB is how much more the server may hold at the
	// flood's height than before it: generous, and far below floodBytes.
	floodRSSSlackKiB = 48 << 10
)

// testH2ControlFlood: a client sends frame (a SETTINGS or a PING, each
// owed an ack) again and again and never reads the acks (CVE-2019-9512,
// 9515). The server either closes the connection with GOAWAY
// ENHANCE_YOUR_CALM or stops reading it; its resident memory stays
// bounded meanwhile (sampled from /proc throughout), and it serves
// another client after.
func testH2ControlFlood(t *testing.T, s *h2Server, frame []byte) {
	pid := s.cmd.Process.Pid
	before, err := rssKiB(pid)
	if err != nil {
		t.Fatal(err)
	}
	c := dialH2(t, s)
	chunk := bytes.Repeat(frame, (1<<20)/len(frame))
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if kib, err := rssKiB(pid); err == nil && int64(kib) > peak.Load() {
				peak.Store(int64(kib))
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	sent := 0
	var werr error
	for sent < floodBytes && werr == nil {
		// A write that waits this long means the server stopped reading
		// (not a timing asserted: both outcomes below are allowed).
		c.SetWriteDeadline(time.Now().Add(20 * time.Second))
		var n int
		n, werr = c.Write(chunk)
		sent += n
	}
	time.Sleep(200 * time.Millisecond) // a last sample after the server took what it read
	close(stop)
	<-sampled
	after, _ := rssKiB(pid)
	t.Logf("sent %d MiB of %d-octet frames (%v); server RSS %d KiB before, %d KiB at most, %d KiB after",
		sent>>20, len(frame), werr, before, peak.Load(), after)
	if werr == nil {
		t.Fatalf("the server read a flood of %d MiB whose acks were never read, and neither ended the connection nor stopped reading", sent>>20)
	}
	if grown := int(peak.Load()) - before; grown > floodRSSSlackKiB {
		t.Fatalf("the server's RSS grew by %d KiB under the flood (at most %d allowed)", grown, floodRSSSlackKiB)
	}
	var ne net.Error
	if errors.As(werr, &ne) && ne.Timeout() {
		t.Logf("the server stopped reading the flood")
	} else {
		// Closed: the GOAWAY is after the acks the client never read, if
		// the close's RST did not drop it; a GOAWAY seen must say why.
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				t.Logf("the server closed the flooding connection (%v; its GOAWAY was not read)", err)
				break
			}
			if g, ok := f.(*xhttp2.GoAwayFrame); ok {
				if g.ErrCode != xhttp2.ErrCodeEnhanceYourCalm {
					t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", g.ErrCode)
				}
				break
			}
		}
	}
	c.Close()
	checkH2Served(t, s)
}

// checkH2Served: a fresh client is served an upload's echo over HTTP/2.
func checkH2Served(t *testing.T, s *h2Server) {
	t.Helper()
	client := s.client()
	defer client.CloseIdleConnections()
	body := uploadBody(100 << 10)
	resp, err := client.Post(s.url("/after?raw"), "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("another client after the attack: %v", err)
	}
	got := readBody(t, resp)
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("another client after the attack: %s over %s", resp.Status, resp.Proto)
	}
	s.checkEcho(t, got, body, "")
}

// testH2MadeYouReset (CVE-2025-8671): on stream after stream, the client
// opens a request (its body still to come, so the stream is open) and
// sends provoke, a frame that is a stream error; the server resets the
// stream with code. Those resets are charged like the client's own, so
// the connection ends with GOAWAY ENHANCE_YOUR_CALM, and a fresh client
// is served after.
func testH2MadeYouReset(t *testing.T, s *h2Server, code xhttp2.ErrCode, provoke func(*h2Conn, uint32) error) {
	c := dialH2(t, s)
	c.fr.AllowIllegalWrites = true
	var mu sync.Mutex // the reader answers PINGs; the writer floods
	done := make(chan struct{})
	go func() {
		defer close(done)
		for id := uint32(1); id < 2*10000; id += 2 {
			mu.Lock()
			c.buf.Reset()
			for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", s.addr}, {":path", "/reset?raw"}} {
				c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
			err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: id, BlockFragment: c.buf.Bytes(), EndHeaders: true})
			if err == nil {
				err = provoke(c, id)
			}
			mu.Unlock()
			if err != nil {
				return // the server closed the connection
			}
		}
	}()
	resets, others := 0, map[xhttp2.ErrCode]int{} // others: e.g. REFUSED_STREAM past the concurrency limit
	var goAway *xhttp2.GoAwayFrame
	for goAway == nil {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the connection after %d resets: %v (no GOAWAY)", resets, err)
		}
		switch f := f.(type) {
		case *xhttp2.RSTStreamFrame:
			if f.ErrCode == code {
				resets++
			} else {
				others[f.ErrCode]++
			}
		case *xhttp2.GoAwayFrame:
			goAway = f
		}
	}
	c.Close()
	<-done
	if goAway.ErrCode != xhttp2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v after %d resets, want ENHANCE_YOUR_CALM", goAway.ErrCode, resets)
	}
	if resets == 0 {
		t.Fatalf("GOAWAY %v without the server resetting a stream with %v first", goAway.ErrCode, code)
	}
	t.Logf("GOAWAY %v after the server reset %d streams with %v (and others: %v)", goAway.ErrCode, resets, code, others)
	checkH2Served(t, s)
}

// testH2ZeroWindow: a client sets SETTINGS_INITIAL_WINDOW_SIZE to 0 and
// never opens it, so the echo's answer waits for good; --send-timeout
// (2s here) resets that stream (CANCEL), with the server's log saying
// why, and a fresh client is served.
func testH2ZeroWindow(t *testing.T, s *h2Server) {
	c := dialH2(t, s)
	if err := c.fr.WriteSettings(xhttp2.Setting{ID: xhttp2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	c.buf.Reset()
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", s.addr}, {":path", "/held?raw"}} {
		c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: 1, BlockFragment: c.buf.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.fr.WriteData(1, true, []byte("held by a shut window")); err != nil {
		t.Fatal(err)
	}
	headers := false
	for reset := false; !reset; {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("waiting for --send-timeout to reset the stream: %v", err)
		}
		switch f := f.(type) {
		case *xhttp2.RSTStreamFrame:
			if f.StreamID != 1 || f.ErrCode != xhttp2.ErrCodeCancel {
				t.Fatalf("RST_STREAM %v on stream %d", f.ErrCode, f.StreamID)
			}
			reset = true
		case *xhttp2.HeadersFrame:
			headers = headers || f.StreamID == 1
		case *xhttp2.DataFrame:
			if len(f.Data()) > 0 {
				t.Fatalf("DATA of %d octets on stream %d through a window of 0", len(f.Data()), f.StreamID)
			}
		case *xhttp2.PingFrame:
			if !f.IsAck() {
				c.fr.WritePing(true, f.Data)
			}
		}
	}
	c.Close()
	if !headers {
		t.Log("the response's HEADERS did not come before the close")
	}
	waitLog(t, s.server, "kept a stream's flow-control window shut for --send-timeout")
	checkH2Served(t, s)
}
