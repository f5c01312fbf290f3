//go:build linux

package tests

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// longChainClient is Python's ssl client with a client certificate chain
// from a file: it prints the response's status line, or the error that
// ended the connection (the alert's name). Its own deadline is 10 s, well
// before the server's 30 s --header-timeout, which a stalled handshake
// used to wait for.
const longChainClient = `
import socket, ssl, sys
ca, chain, key, addr = sys.argv[1:5]
host, port = addr.rsplit(":", 1)
ctx = ssl.create_default_context(cafile=ca)
ctx.load_cert_chain(chain, key)
sock = socket.create_connection((host, int(port)), timeout=10)
try:
    tls = ctx.wrap_socket(sock, server_hostname="localhost")
    tls.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n" not in data:
        piece = tls.recv(4096)
        if not piece:
            break
        data += piece
    print("response", data.split(b"\r\n")[0].decode())
except (ssl.SSLError, OSError) as e:
    print("error", type(e).__name__, e)
`

// TestTLSLongClientChain: a client certificate chain far beyond the 64 KiB
// the loop buffers during the handshake (about 180 KB) is read whole (the
// handshake's reads make room, and the loop receives again) and refused
// with bad_certificate, past tlsrec.MaxClientChain (60 KiB); one past
// crypto/tls's 256 KiB Certificate message is refused with internal_error;
// one of 40 KB is served. The first used to stall until --header-timeout
// (the loop stopped receiving at 64 KiB and nothing told it the handshake
// had read on), and a chain a session ticket cannot hold ended the
// handshake with no alert.
func TestTLSLongClientChain(t *testing.T) {
	ca := tlstest.NewCA(t, "m0serve-test")
	cert := ca.Server(t, tlstest.ECDSA)
	alice := ca.Client(t, "alice")
	dir := t.TempDir()
	padding := tlstest.Padding(t, 330)
	writeChain := func(name string, n int) string {
		var b strings.Builder
		b.Write(alice.CertPEM)
		for _, der := range padding[:n] {
			b.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	accepted := writeChain("accepted.pem", 40) // about 920 bytes of DER each
	tooLong := writeChain("too-long.pem", 200)
	refused := writeChain("refused.pem", 330) // past 256 KiB
	for _, v := range variants[:2] {
		t.Run(v.name, func(t *testing.T) {
			s := start(t, v, "--native", "hello", "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile,
				"--ssl-ca-certs", ca.File, "--ssl-cert-reqs", "2", "--header-timeout", "30s")
			for i := 0; i < 3; i++ {
				out := runTLSTool(t, systemPython, "-c", longChainClient, ca.File, accepted, alice.KeyFile, s.addr)
				if out != "response HTTP/1.1 200 OK" {
					t.Fatalf("a chain of 41 certificates: %q", out)
				}
				out = runTLSTool(t, systemPython, "-c", longChainClient, ca.File, tooLong, alice.KeyFile, s.addr)
				if !strings.HasPrefix(out, "error SSLError") || !strings.Contains(out, "BAD_CERTIFICATE") {
					t.Fatalf("a chain of 201 certificates: %q, want the bad_certificate alert", out)
				}
				out = runTLSTool(t, systemPython, "-c", longChainClient, ca.File, refused, alice.KeyFile, s.addr)
				if !strings.HasPrefix(out, "error SSLError") || !strings.Contains(out, "INTERNAL_ERROR") {
					t.Fatalf("a chain past 256 KiB: %q, want the internal_error alert", out)
				}
			}
			s.stop()
		})
	}
}
