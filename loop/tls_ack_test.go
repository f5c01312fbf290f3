package loop

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
)

// TestTLSHandshakeEndAcksTheFinished: a TLS 1.3 handshake that ends with
// nothing to send (the server's tickets left in its own flight) has the
// client's Finished acknowledged at once: a client with Nagle's algorithm
// on (Python's ssl) holds its first request until then, and the kernel's
// delayed ACK made that 40 ms. When the request came with the Finished,
// its response carries the ACK and no extra one is sent.
func TestTLSHandshakeEndAcksTheFinished(t *testing.T) {
	roundTrip := func(client *tls.Conn, flush func()) error {
		if _, err := client.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			return err
		}
		flush()
		resp, err := http.ReadResponse(bufio.NewReader(client), nil)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "Hello, World!" {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	for _, mode := range fakeModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Run("request-after", func(t *testing.T) {
				h, ca := tlsHarness(t, mode.provided, mode.multishot)
				h.t = t
				var acked []int
				h.l.ackNow = func(fd int) { acked = append(acked, fd) }
				c := h.connect()
				client := tls.Client(&fakeWire{fb: h.fb, c: c}, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
				handshake := make(chan error, 1)
				go func() { handshake <- client.Handshake() }()
				if err := untilReceived(h, "the client's handshake", handshake); err != nil {
					t.Fatal(err)
				}
				s := h.l.slots[c.slot]
				h.until("the server's handshake", func() bool { return s.tls.Ready() })
				if len(acked) != 1 || acked[0] != c.fd {
					t.Fatalf("acknowledged %v at the handshake's end, want fd %d once", acked, c.fd)
				}
				done := make(chan error, 1)
				go func() { done <- roundTrip(client, func() {}) }()
				if err := untilReceived(h, "the response", done); err != nil {
					t.Fatal(err)
				}
				if len(acked) != 1 {
					t.Fatalf("acknowledged %v, want once", acked)
				}
			})
			t.Run("request-with-the-finished", func(t *testing.T) {
				h, ca := tlsHarness(t, mode.provided, mode.multishot)
				h.t = t
				var acked []int
				h.l.ackNow = func(fd int) { acked = append(acked, fd) }
				c := h.connect()
				wire := &corkedWire{fakeWire: fakeWire{fb: h.fb, c: c}}
				client := tls.Client(wire, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
				done := make(chan error, 1)
				go func() {
					if err := client.Handshake(); err != nil {
						done <- err
						return
					}
					done <- roundTrip(client, wire.flush)
				}()
				if err := untilReceived(h, "the response", done); err != nil {
					t.Fatal(err)
				}
				if len(acked) != 0 {
					t.Fatalf("acknowledged %v: the response carried the ACK", acked)
				}
			})
		})
	}
}
