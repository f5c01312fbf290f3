package cli

import (
	"flag"

	"github.com/m0serve/m0serve/server"
)

// addTLSFlags defines uvicorn's --ssl-* flags and Granian's
// --ssl-protocol-min.
func addTLSFlags(fs *flag.FlagSet, cfg *server.Config) {
	t := &cfg.TLS
	if t.MinVersion == "" {
		t.MinVersion = "tls1.2"
	}
	fs.StringVar(&t.CertFile, "ssl-certfile", t.CertFile, "serve HTTPS with this PEM certificate (and its chain): TLS is on when set")
	fs.StringVar(&t.KeyFile, "ssl-keyfile", t.KeyFile, "the certificate's PEM private key (default: in --ssl-certfile)")
	fs.StringVar(&t.KeyPassword, "ssl-keyfile-password", t.KeyPassword, "the password of an encrypted --ssl-keyfile")
	fs.StringVar(&t.CAFile, "ssl-ca-certs", t.CAFile, "PEM CA certificates a client certificate must chain to")
	fs.IntVar(&t.CertReqs, "ssl-cert-reqs", t.CertReqs, "client certificates: 0 none, 1 optional (verified if sent), 2 required; 1 and 2 need --ssl-ca-certs; a chain past 60 KiB is refused")
	fs.StringVar(&t.Ciphers, "ssl-ciphers", t.Ciphers, "TLS 1.2 cipher suites, OpenSSL's names, ':'-separated (default: Go's, ECDHE with AES-GCM or ChaCha20 first)")
	fs.StringVar(&t.MinVersion, "ssl-protocol-min", t.MinVersion, "lowest TLS version: tls1.2 or tls1.3")
}

// addHTTP2Flags defines Granian's --http and the HTTP/2 settings.
func addHTTP2Flags(fs *flag.FlagSet, cfg *server.Config) {
	fs.StringVar(&cfg.HTTP, "http", cfg.HTTP, "auto: HTTP/1.1, and HTTP/2 by TLS's ALPN or by its preface on a cleartext port; 1: HTTP/1.1 only; 2: HTTP/2 only")
	fs.IntVar(&cfg.HTTP2MaxConcurrentStreams, "http2-max-concurrent-streams", cfg.HTTP2MaxConcurrentStreams, "HTTP/2 streams a client may have open at once on a connection")
	fs.Var((*intSize)(&cfg.HTTP2InitialWindowSize), "http2-initial-window-size", "HTTP/2 request body bytes a stream may send ahead of the app's reads")
	fs.Var((*intSize)(&cfg.HTTP2MaxFrameSize), "http2-max-frame-size", "largest HTTP/2 frame payload accepted, in bytes (16384 to 16777215)")
	fs.Var((*intSize)(&cfg.HTTP2MaxHeaderListSize), "http2-max-header-list-size", "largest HTTP/2 request header list, counted as RFC 9113 counts it (431 beyond)")
}
