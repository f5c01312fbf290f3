package loop

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/tlsrec"
	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// TestTLSLongClientChainIsRefused: a client chain of about 180 KB, far
// past the ciphertext the loop buffers during a handshake (the TLS room's bound),
// is read whole, the handshake's reads telling the loop to receive again,
// and refused with bad_certificate (past tlsrec.MaxClientChain), not left
// waiting at the cap for --header-timeout.
func TestTLSLongClientChainIsRefused(t *testing.T) {
	ca := tlstest.NewCA(t, "loop-test")
	cert := ca.Server(t, tlstest.ECDSA)
	alice := ca.Client(t, "alice")
	padding := tlstest.Padding(t, 200)
	srv, err := tlsrec.NewServer(tlsrec.Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile, CAFile: ca.File, CertReqs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range fakeModes {
		t.Run(mode.name, func(t *testing.T) {
			h := newHarness(t, hello, func(c *Config) { c.TLS = srv })
			h.t = t
			h.fb.provided, h.fb.multishot = mode.provided, mode.multishot
			c := h.connect()
			chain := tls.Certificate{Certificate: append([][]byte{alice.Cert.Raw}, padding...), PrivateKey: alice.Key}
			client := tls.Client(&fakeWire{fb: h.fb, c: c}, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost",
				Certificates: []tls.Certificate{chain}})
			done := make(chan error, 1)
			go func() {
				err := client.Handshake()
				if err == nil {
					_, err = client.Read(make([]byte, 1))
				}
				done <- err
			}()
			err := untilReceived(h, "the client's end", done)
			if err == nil || !strings.Contains(err.Error(), "bad certificate") {
				t.Fatalf("the client got %v, want the bad_certificate alert", err)
			}
		})
	}
}
