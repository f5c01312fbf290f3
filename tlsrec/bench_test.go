package tlsrec

import (
	"crypto/tls"
	"testing"

	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// BenchmarkRequestRecords is the loop's per-request TLS work on a
// keep-alive connection: feed one request record, open it, seal a small
// response, take the output and give its buffer back. The client's
// records are made before the timer starts.
func BenchmarkRequestRecords(b *testing.B) {
	for _, tc := range []struct {
		name   string
		suites []uint16
		max    uint16
	}{
		{"tls13-aes128gcm", nil, tls.VersionTLS13},
		{"tls12-ecdhe-aes128gcm", []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, tls.VersionTLS12},
		{"tls12-ecdhe-chacha20", []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}, tls.VersionTLS12},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ca := tlstest.NewCA(b, "bench")
			cert := ca.Server(b, tlstest.ECDSA)
			srv := testServer(b, Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile})
			ls, wire := newLoopSide(b, srv)
			client := tls.Client(wire, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost",
				MaxVersion: tc.max, CipherSuites: tc.suites})
			done := make(chan error, 1)
			go func() { done <- client.Handshake() }()
			if err := ls.handshake(); err != nil {
				b.Fatal(err)
			}
			ls.send()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			req := []byte("GET /bench HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
			resp := []byte("HTTP/1.1 200 OK\r\nServer: m0serve\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!")
			records := make([][]byte, b.N)
			go func() {
				for range b.N {
					client.Write(req)
				}
			}()
			for i := range records {
				hdr := make([]byte, 5)
				readFull(b, ls, hdr)
				body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
				readFull(b, ls, body)
				records[i] = append(hdr, body...)
			}
			dst := make([]byte, 16<<10)
			b.ReportAllocs()
			b.SetBytes(int64(len(req) + len(resp)))
			b.ResetTimer()
			for i := range b.N {
				ls.conn.Feed(records[i])
				n, err := ls.conn.Open(dst)
				if err != nil || n != len(req) {
					b.Fatalf("open: %d %v", n, err)
				}
				if _, err := ls.conn.Open(dst); err != ErrWouldBlock {
					b.Fatalf("second open: %v", err)
				}
				if err := ls.conn.Seal(resp); err != nil {
					b.Fatal(err)
				}
				ls.conn.Sent(ls.conn.Output())
			}
		})
	}
}

func readFull(b *testing.B, ls *loopSide, p []byte) {
	for len(p) > 0 {
		n, err := ls.wire.Read(p)
		if err != nil {
			b.Fatal(err)
		}
		p = p[n:]
	}
}
