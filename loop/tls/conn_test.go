package tls

import (
	cryptotls "crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/m0serve/m0serve/tlsrec"
	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

func newServer(t *testing.T) (*tlsrec.Server, *tlstest.CA) {
	ca := tlstest.NewCA(t, "room-test")
	cert := ca.Server(t, tlstest.ECDSA)
	srv, err := tlsrec.NewServer(tlsrec.Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	return srv, ca
}

// TestFirstBytesThatAreNotTLS: a plain HTTP request is told from bytes
// that are neither, and both close the record layer before a handshake.
func TestFirstBytesThatAreNotTLS(t *testing.T) {
	srv, _ := newServer(t)
	for _, tc := range []struct {
		first string
		want  Arrival
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", PlainHTTP},
		{"\x00\x01\x02garbage", NotTLS},
	} {
		var c Conn
		c.Init(srv, func() {})
		if got := c.Received([]byte(tc.first), len(tc.first)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.first, got, tc.want)
		}
		if c.Ready() {
			t.Errorf("%q: ready", tc.first)
		}
	}
}

// TestHandshakeThenRecords drives the room as the loop does, with no
// loop: a Go TLS client's bytes are fed in, the handshake's news is taken
// when its goroutine posts it, the output goes back to the client; then
// a record is opened and an answer sealed, and close_notify reaches the
// client as a clean EOF.
func TestHandshakeThenRecords(t *testing.T) {
	srv, ca := newServer(t)
	clientSide, serverSide := net.Pipe()
	defer clientSide.Close()
	defer serverSide.Close()

	news := make(chan struct{}, 64)
	var c Conn
	c.Init(srv, func() { news <- struct{}{} })
	defer c.Close()

	arrived := make(chan []byte, 64)
	go func() {
		for {
			buf := make([]byte, 32<<10)
			n, err := serverSide.Read(buf)
			if err != nil {
				close(arrived)
				return
			}
			arrived <- buf[:n]
		}
	}()
	outbound := make(chan []byte, 64)
	go func() {
		for b := range outbound {
			if _, err := serverSide.Write(b); err != nil {
				return
			}
		}
	}()
	defer close(outbound)
	send := func() {
		out, _ := c.Output()
		if out != nil {
			outbound <- append([]byte(nil), out...)
			c.Sent()
		}
	}

	answer := make(chan string, 1)
	go func() {
		client := cryptotls.Client(clientSide, &cryptotls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
		if _, err := client.Write([]byte("ping")); err != nil {
			answer <- "write: " + err.Error()
			return
		}
		got := make([]byte, 4)
		if _, err := io.ReadFull(client, got); err != nil {
			answer <- "read: " + err.Error()
			return
		}
		if _, err := client.Read(make([]byte, 1)); err != io.EOF {
			answer <- "after the answer: " + err.Error()
			return
		}
		answer <- string(got)
	}()

	plain := make([]byte, 0, 64)
	timeout := time.After(10 * time.Second)
	for len(plain) < 4 {
		select {
		case b := <-arrived:
			if got := c.Received(b, len(b)); got == PlainHTTP || got == NotTLS {
				t.Fatalf("a TLS client's bytes arrived as %v", got)
			}
		case <-news:
			if done, err := c.Handshake(); done && err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatal("no request")
		}
		for c.Ready() {
			n, err := c.Open(plain[len(plain):cap(plain)])
			plain = plain[:len(plain)+n]
			if err == ErrWouldBlock {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		send()
	}
	if string(plain) != "ping" {
		t.Fatalf("opened %q", plain)
	}
	if err := c.Seal([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if !c.CloseNotify() || c.CloseNotify() {
		t.Fatal("close_notify: want one, once")
	}
	send()
	select {
	case got := <-answer:
		if got != "pong" {
			t.Fatal(got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}
