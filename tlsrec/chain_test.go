package tlsrec

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// inputHigh is the loop's cap on ciphertext buffered ahead of the reader
// (loop.tlsInboxHigh).
const inputHigh = 64 << 10

// cappedHandshake plays the loop with its cap: it feeds what the client
// sends only while InputFull says there is room, and otherwise waits for
// the Conn's news, as the loop waits for a note before it receives again.
// It returns the handshake's error, or fails the test if no news comes
// for 10 s (the handshake stalled).
func cappedHandshake(t *testing.T, c *Conn, wire net.Conn, news <-chan struct{}) error {
	t.Helper()
	chunks := make(chan []byte, 1024)
	go func() {
		for {
			buf := make([]byte, 16<<10)
			n, err := wire.Read(buf)
			if n > 0 {
				chunks <- buf[:n]
			}
			if err != nil {
				close(chunks)
				return
			}
		}
	}()
	var pending []byte
	for {
		if len(pending) > 0 && !c.InputFull(inputHigh) {
			n := min(len(pending), 16<<10)
			c.Feed(pending[:n])
			c.Start()
			pending = pending[n:]
			continue
		}
		input := chunks
		if len(pending) > 0 {
			input = nil // full: only news from the handshake goes on
		}
		select {
		case b, ok := <-input:
			if !ok {
				chunks = nil
				continue
			}
			pending = append(pending, b...)
		case <-news:
			if out := c.Output(); out != nil {
				go func() { wire.Write(out); c.Sent(out) }()
			}
			if done, err := c.Handshake(); done {
				return err
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the handshake stalled with %d bytes buffered and %d waiting", c.Buffered(), len(pending))
		}
	}
}

// TestLongClientChain: a client chain far past the loop's 64 KiB cap is
// read whole (the handshake's reads make room, and say so) and refused
// with bad_certificate past MaxClientChain, which a session ticket must
// hold; past crypto/tls's 256 KiB Certificate message it is refused with
// internal_error; chains under MaxClientChain are taken. The handshake used to stall
// at the cap, and a chain the ticket could not hold failed after the
// client's Finished with no alert.
func TestLongClientChain(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	cert := ca.Server(t, tlstest.ECDSA)
	alice := ca.Client(t, "alice")
	srv := testServer(t, Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, CAFile: ca.File, CertReqs: 2})
	padding := tlstest.Padding(t, 330)
	for _, tc := range []struct {
		name      string
		padding   int    // about 920 bytes each
		serverErr string // "": accepted
		alert     string
	}{
		{"40KB", 40, "", ""},
		{"58KB", 62, "", ""}, // under MaxClientChain: the ticket holds it
		{"64KB", 70, "certificate chain comes to", "bad certificate"},
		{"180KB", 200, "certificate chain comes to", "bad certificate"},
		{"300KB", 330, "exceeds maximum", "internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, wire := net.Pipe()
			news := make(chan struct{}, 64)
			conn := srv.NewConn(nil, func() {
				select {
				case news <- struct{}{}:
				default:
				}
			})
			t.Cleanup(func() { server.Close(); wire.Close(); conn.Close() })
			chain := tls.Certificate{Certificate: append([][]byte{alice.Cert.Raw}, padding[:tc.padding]...), PrivateKey: alice.Key}
			// A session cache, so that the client offers resumption (as
			// OpenSSL always does) and the server sends a ticket.
			client := tls.Client(wire, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", Certificates: []tls.Certificate{chain},
				ClientSessionCache: tls.NewLRUClientSessionCache(1)})
			clientErr := make(chan error, 1)
			go func() {
				err := client.Handshake()
				if err == nil {
					_, err = client.Read(make([]byte, 1))
				}
				clientErr <- err
			}()
			err := cappedHandshake(t, conn, server, news)
			if tc.serverErr == "" {
				if err != nil {
					t.Fatalf("handshake: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.serverErr) {
				t.Fatalf("handshake: %v, want %q", err, tc.serverErr)
			}
			// The alert reaches the client.
			if out := conn.Output(); out != nil {
				go server.Write(out)
			}
			select {
			case err := <-clientErr:
				if err == nil || !strings.Contains(err.Error(), tc.alert) {
					t.Fatalf("the client got %v, want the %s alert", err, tc.alert)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the client heard nothing")
			}
		})
	}
}
