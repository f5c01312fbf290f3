package loop

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m0serve/m0serve/tlsrec"
	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// fakeWire is a client's net.Conn over a fakeBackend connection: what it
// writes the loop receives, and it reads what the loop sent.
type fakeWire struct {
	fb   *fakeBackend
	c    *fakeConn
	mu   sync.Mutex
	read int
}

func (w *fakeWire) Write(p []byte) (int, error) {
	w.fb.write(w.c, string(p))
	return len(p), nil
}

func (w *fakeWire) Read(p []byte) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := w.fb.output(w.c)
		w.mu.Lock()
		if w.read < len(out) {
			n := copy(p, out[w.read:])
			w.read += n
			w.mu.Unlock()
			return n, nil
		}
		w.mu.Unlock()
		if w.fb.isClosed(w.c) {
			return 0, io.EOF
		}
		if time.Now().After(deadline) {
			return 0, io.ErrNoProgress
		}
		time.Sleep(time.Millisecond)
	}
}

func (w *fakeWire) Close() error                     { return nil }
func (w *fakeWire) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (w *fakeWire) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (w *fakeWire) SetDeadline(time.Time) error      { return nil }
func (w *fakeWire) SetReadDeadline(time.Time) error  { return nil }
func (w *fakeWire) SetWriteDeadline(time.Time) error { return nil }

func tlsHarness(t *testing.T, provided, multishot bool) (*harness, *tlstest.CA) {
	ca := tlstest.NewCA(t, "loop-test")
	cert := ca.Server(t, tlstest.ECDSA)
	srv, err := tlsrec.NewServer(tlsrec.Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, hello, func(c *Config) { c.TLS = srv })
	h.fb.provided, h.fb.multishot = provided, multishot
	return h, ca
}

// TestTLSRequestsThroughTheLoop: a Go TLS client over the fake backend:
// the handshake's flights pass through the loop's notes, then keep-alive
// requests are opened and answered sealed, with the backend's own
// buffers and with the slot's (the record layer's room), and close_notify
// ends a Connection: close response.
func TestTLSRequestsThroughTheLoop(t *testing.T) {
	for _, mode := range []struct {
		name                string
		provided, multishot bool
	}{{"own-buffer", false, false}, {"provided", true, false}, {"provided-multishot", true, true}} {
		t.Run(mode.name, func(t *testing.T) {
			h, ca := tlsHarness(t, mode.provided, mode.multishot)
			c := h.connect()
			wire := &fakeWire{fb: h.fb, c: c}
			client := tls.Client(wire, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", NextProtos: []string{"http/1.1"}})
			done := make(chan error, 1)
			go func() {
				br := bufio.NewReader(client)
				for i := 0; i < 3; i++ {
					req := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
					if i == 2 {
						req = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
					}
					if _, err := client.Write([]byte(req)); err != nil {
						done <- err
						return
					}
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						done <- err
						return
					}
					body, _ := io.ReadAll(resp.Body)
					if string(body) != "Hello, World!" {
						done <- io.ErrUnexpectedEOF
						return
					}
				}
				// The server's close_notify: a clean EOF, not a truncation.
				_, err := br.ReadByte()
				if err != io.EOF {
					done <- err
					return
				}
				done <- nil
			}()
			var err error
			h.until("the client's three requests", func() bool {
				select {
				case err = <-done:
					return true
				default:
					time.Sleep(time.Millisecond)
					return false
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if st := client.ConnectionState(); st.NegotiatedProtocol != "http/1.1" {
				t.Fatalf("ALPN %q", st.NegotiatedProtocol)
			}
		})
	}
}

// TestTLSPlainHTTPAndGarbage: plain HTTP on the TLS port gets nginx's 400
// in the clear and a close; bytes that are neither get a close alone.
func TestTLSPlainHTTPAndGarbage(t *testing.T) {
	h, _ := tlsHarness(t, true, true)
	c := h.connect()
	h.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	h.until("the 400", func() bool { return strings.Contains(h.fb.output(c), plainHTTPReason) })
	if out := h.fb.output(c); !strings.HasPrefix(out, "HTTP/1.1 400 ") {
		t.Fatalf("got %q", out)
	}
	h.fb.shutdownWrite(c)
	h.until("the close", func() bool { return h.fb.isClosed(c) })

	g := h.connect()
	h.fb.write(g, "\x00\x01\x02garbage")
	h.until("the close", func() bool { return h.fb.isClosed(g) })
	if out := h.fb.output(g); out != "" {
		t.Fatalf("garbage got %q", out)
	}
}
