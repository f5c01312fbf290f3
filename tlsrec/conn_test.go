package tlsrec

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// loopSide plays the loop for one Conn over a net.Pipe: it feeds what the
// client sends and sends what Output holds, the way the loop does, until
// the handshake ends.
type loopSide struct {
	t      testing.TB
	conn   *Conn
	wire   net.Conn
	news   chan struct{}
	closed chan struct{}
}

func newLoopSide(t testing.TB, srv *Server) (*loopSide, net.Conn) {
	server, client := net.Pipe()
	ls := &loopSide{t: t, wire: server, news: make(chan struct{}, 64), closed: make(chan struct{})}
	ls.conn = srv.NewConn(nil, func() {
		select {
		case ls.news <- struct{}{}:
		default:
		}
	})
	t.Cleanup(func() { server.Close(); client.Close(); ls.conn.Close() })
	return ls, client
}

// handshake drives the handshake to its end and returns its error.
func (ls *loopSide) handshake() error {
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ls.wire.Read(buf)
			if n > 0 {
				ls.conn.Feed(buf[:n])
				ls.conn.Start()
			}
			if err != nil {
				close(ls.closed)
				return
			}
			if done, _ := ls.conn.Handshake(); done {
				close(ls.closed)
				return
			}
		}
	}()
	for {
		select {
		case <-ls.news:
		case <-time.After(10 * time.Second):
			ls.t.Fatal("handshake: no news in 10s")
		}
		ls.send()
		if done, err := ls.conn.Handshake(); done {
			// Unblock the feeding goroutine's read, then wait for it.
			ls.wire.SetReadDeadline(time.Now())
			<-ls.closed
			ls.wire.SetReadDeadline(time.Time{})
			return err
		}
	}
}

func (ls *loopSide) send() {
	if out := ls.conn.Output(); out != nil {
		go func(out []byte) {
			ls.wire.Write(out)
			ls.conn.Sent(out)
		}(out)
	}
}

func testServer(t testing.TB, s Settings) *Server {
	srv, err := NewServer(s)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestHandshakeThenRecordsInline(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	for _, tc := range []struct {
		name    string
		kind    tlstest.KeyKind
		version uint16
	}{{"ecdsa-1.3", tlstest.ECDSA, tls.VersionTLS13}, {"rsa-1.2", tlstest.RSA, tls.VersionTLS12}} {
		t.Run(tc.name, func(t *testing.T) {
			cert := ca.Server(t, tc.kind)
			srv := testServer(t, Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile})
			ls, wire := newLoopSide(t, srv)
			client := tls.Client(wire, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost",
				MaxVersion: tc.version, NextProtos: []string{"http/1.1"}})
			clientDone := make(chan error, 1)
			go func() { clientDone <- client.Handshake() }()
			if err := ls.handshake(); err != nil {
				t.Fatalf("server handshake: %v", err)
			}
			// The client's handshake may wait on the server's last flight.
			ls.send()
			if err := <-clientDone; err != nil {
				t.Fatalf("client handshake: %v", err)
			}
			if st := client.ConnectionState(); st.Version != tc.version || st.NegotiatedProtocol != "http/1.1" {
				t.Fatalf("negotiated %x %q", st.Version, st.NegotiatedProtocol)
			}

			// A request in the clear reaches the "loop" as records.
			req := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
			go client.Write([]byte(req))
			got := ls.open(t, len(req))
			if got != req {
				t.Fatalf("opened %q", got)
			}
			// And the answer goes back sealed.
			if err := ls.conn.Seal([]byte("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")); err != nil {
				t.Fatal(err)
			}
			ls.send()
			buf := make([]byte, 100)
			n, err := io.ReadAtLeast(client, buf, 40)
			if err != nil || !strings.HasSuffix(string(buf[:n]), "ok") {
				t.Fatalf("client read %q, %v", buf[:n], err)
			}
			facts := string(ls.conn.Facts())
			for _, want := range []string{"HTTPS\x00on\x00", "tls_version\x00" + itoa(tc.version) + "\x00", "server_cert\x00-----BEGIN CERTIFICATE-----"} {
				if !strings.Contains(facts, want) {
					t.Errorf("facts lack %q: %q", want, facts)
				}
			}
		})
	}
}

func itoa(v uint16) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtUint(v)) }

func fmtUint(v uint16) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
		if v == 0 {
			return string(b)
		}
	}
}

// open reads ciphertext off the wire in small pieces, opening what it
// can after each: a partial record gives ErrWouldBlock, never an error
// that sticks.
func (ls *loopSide) open(t *testing.T, want int) string {
	var plain bytes.Buffer
	buf := make([]byte, 7) // smaller than a record header and body
	dst := make([]byte, 4096)
	partials := 0
	for plain.Len() < want {
		n, err := ls.wire.Read(buf)
		if err != nil {
			t.Fatalf("wire: %v", err)
		}
		ls.conn.Feed(buf[:n])
		for {
			m, err := ls.conn.Open(dst)
			plain.Write(dst[:m])
			if err == ErrWouldBlock {
				partials++
				break
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
		}
	}
	if partials == 0 {
		t.Fatal("no partial record was seen")
	}
	return plain.String()
}

func TestClientCertificates(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	other := tlstest.NewCA(t, "other")
	cert := ca.Server(t, tlstest.ECDSA)
	good := ca.Client(t, "alice")
	bad := other.Client(t, "mallory")
	srv := testServer(t, Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, CAFile: ca.File, CertReqs: 2})
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{{"trusted", []tls.Certificate{good.Pair}, true}, {"untrusted", []tls.Certificate{bad.Pair}, false}, {"none", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ls, wire := newLoopSide(t, srv)
			client := tls.Client(wire, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", Certificates: tc.certs})
			go func() { client.Handshake(); client.Read(make([]byte, 1)) }()
			err := ls.handshake()
			if tc.ok != (err == nil) {
				t.Fatalf("handshake: %v", err)
			}
			if tc.ok {
				facts := string(ls.conn.Facts())
				if !strings.Contains(facts, "SSL_CLIENT_S_DN\x00CN=alice,O=m0serve tests\x00") ||
					!strings.Contains(facts, "client_cert_name\x00CN=alice") {
					t.Fatalf("facts: %q", facts)
				}
			}
		})
	}
}

func TestSettingsErrorsNameTheFlag(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	cert := ca.Server(t, tlstest.ECDSA)
	otherCert := ca.Server(t, tlstest.ECDSA)
	encrypted := ca.EncryptedKeyFile(t, cert, "sesame")
	for _, tc := range []struct {
		s    Settings
		flag string
	}{
		{Settings{CertFile: "/nonexistent.pem", KeyFile: cert.KeyFile}, "ssl-certfile"},
		{Settings{CertFile: cert.CertFile, KeyFile: "/nonexistent.key"}, "ssl-keyfile"},
		{Settings{CertFile: cert.CertFile, KeyFile: otherCert.KeyFile}, "ssl-keyfile"},
		{Settings{CertFile: cert.CertFile, KeyFile: encrypted}, "ssl-keyfile-password"},
		{Settings{CertFile: cert.CertFile, KeyFile: encrypted, KeyPassword: "wrong"}, "ssl-keyfile-password"},
		{Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, CertReqs: 2}, "ssl-cert-reqs"},
		{Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, CertReqs: 3, CAFile: ca.File}, "ssl-cert-reqs"},
		{Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, Ciphers: "RC4-MD5"}, "ssl-ciphers"},
		{Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, MinVersion: "tls1.1"}, "ssl-protocol-min"},
		{Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, CAFile: cert.KeyFile, CertReqs: 1}, "ssl-ca-certs"},
	} {
		_, err := NewServer(tc.s)
		var e *Error
		if !errors.As(err, &e) || e.Flag != tc.flag {
			t.Errorf("%+v: got %v, want an error naming --%s", tc.s, err, tc.flag)
		}
	}
	if _, err := NewServer(Settings{CertFile: cert.CertFile, KeyFile: encrypted, KeyPassword: "sesame"}); err != nil {
		t.Errorf("the right password: %v", err)
	}
	if _, err := NewServer(Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile,
		Ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305"}); err != nil {
		t.Errorf("OpenSSL names: %v", err)
	}
}

func TestReloadKeepsTheOldCertificateOnError(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	first := ca.Server(t, tlstest.ECDSA)
	second := ca.Server(t, tlstest.ECDSA)
	// The files the server was started with, rewritten in place.
	dir := t.TempDir()
	certFile, keyFile := dir+"/cert.pem", dir+"/key.pem"
	write(t, certFile, first.CertPEM)
	write(t, keyFile, first.KeyPEM)
	srv := testServer(t, Settings{CertFile: certFile, KeyFile: keyFile})
	write(t, certFile, second.CertPEM) // the key does not match yet
	if err := srv.Reload(); err == nil {
		t.Fatal("a mismatched pair reloaded")
	}
	if srv.CertificatePEM() != string(first.CertPEM) {
		t.Fatal("a failed reload replaced the certificate")
	}
	write(t, keyFile, second.KeyPEM)
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if srv.CertificatePEM() != string(second.CertPEM) {
		t.Fatal("the reload did not take")
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		in             string
		tlsLike, plain bool
	}{{"\x16\x03\x01", true, false}, {"GET / HTTP/1.1\r\n", false, true}, {"POST", false, true},
		{"\x00\x01garbage", false, false}, {"get /", false, false}} {
		tlsLike, plain := Sniff([]byte(tc.in))
		if tlsLike != tc.tlsLike || plain != tc.plain {
			t.Errorf("Sniff(%q) = %v, %v", tc.in, tlsLike, plain)
		}
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
