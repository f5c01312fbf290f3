//go:build linux

package tests

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	xhttp2 "golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// More streams finishing at once than the loop's note rings hold: a
// driven ASGI app (the default --asgi-thread) finishes its jobs on the
// loop thread, inside the Step, and each finished job is a note the same
// thread drains later in the pass. The rings are sized by
// --max-connections; HTTP/2 multiplies the jobs by the streams. The loop
// used to spin forever on its own full ring: 1 connection of 200 streams
// under --max-connections 1 (a ring of 128), or 6 of 100 under 100 (512).

// TestHTTP2ManyStreamsDrivenASGI: every stream is answered.
func TestHTTP2ManyStreamsDrivenASGI(t *testing.T) {
	for _, v := range variants[:2] {
		t.Run(v.name, func(t *testing.T) {
			t.Run("1x200", func(t *testing.T) {
				s := startH2(t, v, false, "h2_app:app", "--max-connections", "1", "--http2-max-concurrent-streams", "256")
				if err := manyStreams(s, 200); err != nil {
					t.Fatal(err)
				}
				checkNoTraceback(t, s.server)
				s.stop()
			})
			t.Run("6x100", func(t *testing.T) {
				s := startH2(t, v, false, "h2_app:app", "--max-connections", "100")
				var wg sync.WaitGroup
				errs := make(chan error, 6)
				for i := 0; i < 6; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := manyStreams(s, 100); err != nil {
							errs <- fmt.Errorf("client %d: %w", i, err)
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				checkNoTraceback(t, s.server)
				s.stop()
			})
		})
	}
}

// manyStreams opens one h2c connection, sends n GETs in one write, and
// waits (30 s at most: a stuck loop answers none after its ring filled)
// until each has its 200 and END_STREAM.
func manyStreams(s *h2Server, n int) error {
	c, err := dialH2Raw(s)
	if err != nil {
		return err
	}
	defer c.Close()
	for i := 0; i < n; i++ {
		if err := c.request(uint32(2*i+1), s.addr, fmt.Sprintf("/stream/%d", i)); err != nil {
			return err
		}
	}
	status := map[uint32]string{}
	ended := 0
	for ended < n {
		f, err := c.fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("%d of %d streams answered: %w", ended, n, err)
		}
		switch f := f.(type) {
		case *xhttp2.SettingsFrame:
			if !f.IsAck() {
				c.fr.WriteSettingsAck()
			}
		case *xhttp2.MetaHeadersFrame:
			status[f.StreamID] = f.PseudoValue("status")
			if f.StreamEnded() {
				ended++
			}
		case *xhttp2.DataFrame:
			if f.StreamEnded() {
				ended++
			}
		case *xhttp2.RSTStreamFrame:
			return fmt.Errorf("stream %d reset: %v", f.StreamID, f.ErrCode)
		case *xhttp2.GoAwayFrame:
			return fmt.Errorf("GOAWAY %v %q", f.ErrCode, f.DebugData())
		}
	}
	for id, st := range status {
		if st != "200" {
			return fmt.Errorf("stream %d: status %q", id, st)
		}
	}
	if len(status) != n {
		return fmt.Errorf("%d streams had a head, want %d", len(status), n)
	}
	return nil
}

// dialH2Raw is dialH2 (h2c) for a goroutine: errors come back rather than
// failing the test, and the deadline is 30 s.
func dialH2Raw(s *h2Server) (*h2Conn, error) {
	nc, err := net.Dial("tcp", s.addr)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	c := &h2Conn{Conn: nc}
	c.fr = xhttp2.NewFramer(nc, nc)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.enc = hpack.NewEncoder(&c.buf)
	if _, err := nc.Write([]byte(xhttp2.ClientPreface)); err != nil {
		nc.Close()
		return nil, err
	}
	if err := c.fr.WriteSettings(); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// TestHTTP2ManyWebSocketsDrivenASGI: 200 WebSockets over one HTTP/2
// connection (RFC 8441) under --max-connections 1, to the driven ASGI
// echo app: each message is echoed in the Step, a note on the loop's
// WebSocket ring (of 128) from the thread that drains it.
func TestHTTP2ManyWebSocketsDrivenASGI(t *testing.T) {
	const n = 200
	s := startH2(t, variants[0], false, "asgi_ws_echo_app:app", "--max-connections", "1", "--http2-max-concurrent-streams", "256")
	c := dialH2(t, s)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := newH2WSReader(t, c)
	r.until("SETTINGS", func() bool { return len(r.settings) > 0 })
	// The opening handshakes in two halves, each within the ring of job
	// notes they also make; the echoes all at once.
	for half := 0; half < 2; half++ {
		for i := half * n / 2; i < (half+1)*n/2; i++ {
			writeWSConnect(t, c, uint32(2*i+1), s.addr)
		}
		r.until("the accepts", func() bool { return len(r.fields) == (half+1)*n/2 })
	}
	for id, f := range r.fields {
		if f[":status"] != "200" {
			t.Fatalf("stream %d: %v", id, f)
		}
	}
	for i := 0; i < n; i++ {
		if err := c.fr.WriteData(uint32(2*i+1), false, h2WSFrame(0x1, fmt.Sprintf("m%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if op, m := r.message(uint32(2*i + 1)); op != 0x1 || m != fmt.Sprintf("m%d", i) {
			t.Fatalf("stream %d: op %d %q", 2*i+1, op, m)
		}
	}
	c.Close()
	checkNoTraceback(t, s.server)
	s.stop()
}
