//go:build linux

package tests

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// tlsServer is a server started with --ssl-certfile, and how to reach it.
type tlsServer struct {
	*server
	ca   *tlstest.CA
	cert *tlstest.Issued
}

func (s *tlsServer) url(path string) string { return "https://" + s.addr + path }

// startTLS starts m0serve on variant v with a certificate from a fresh
// test CA and args added.
func startTLS(t *testing.T, v variant, kind tlstest.KeyKind, args ...string) *tlsServer {
	t.Helper()
	ca := tlstest.NewCA(t, "m0serve-test")
	cert := ca.Server(t, kind)
	s := start(t, v, append([]string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile}, args...)...)
	return &tlsServer{server: s, ca: ca, cert: cert}
}

// client is a Go HTTPS client trusting the server's CA.
func (s *tlsServer) client(cfg *tls.Config) *http.Client {
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg.RootCAs = s.ca.Pool
	cfg.NextProtos = []string{"http/1.1"}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 1}}
}

// TestTLSClients: the native handler over TLS, on each backend and on
// io_uring without multishot receives (its receives fill the record
// layer's own buffer), with the clients people use.
func TestTLSClients(t *testing.T) {
	for _, v := range []variant{variants[0], variants[1], variants[5]} {
		t.Run(v.name, func(t *testing.T) {
			s := startTLS(t, v, tlstest.ECDSA, "--native", "hello")
			t.Run("go-keepalive", func(t *testing.T) { testTLSGoKeepAlive(t, s, 0) })
			t.Run("go-tls12", func(t *testing.T) { testTLSGoKeepAlive(t, s, tls.VersionTLS12) })
			t.Run("python", func(t *testing.T) { testTLSPython(t, s) })
			t.Run("curl", func(t *testing.T) { testTLSCurl(t, s) })
			t.Run("openssl", func(t *testing.T) { testTLSOpenSSL(t, s) })
			t.Run("plain-http", func(t *testing.T) { testTLSPlainHTTP(t, s) })
			t.Run("garbage", func(t *testing.T) { testTLSGarbage(t, s) })
			t.Run("tls11-refused", func(t *testing.T) {
				_, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: s.ca.Pool, MaxVersion: tls.VersionTLS11})
				if err == nil {
					t.Fatal("a TLS 1.1 handshake succeeded")
				}
			})
		})
	}
}

func testTLSGoKeepAlive(t *testing.T, s *tlsServer, version uint16) {
	client := s.client(&tls.Config{MaxVersion: version})
	defer client.CloseIdleConnections()
	var firstConn string
	for i := 0; i < 20; i++ {
		resp, err := client.Get(s.url("/"))
		if err != nil {
			t.Fatal(err)
		}
		body := readBody(t, resp)
		if resp.StatusCode != 200 || string(body) != "Hello, World!" {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
		if resp.TLS == nil || resp.TLS.NegotiatedProtocol != "http/1.1" {
			t.Fatalf("TLS state %+v", resp.TLS)
		}
		if version != 0 && resp.TLS.Version != version {
			t.Fatalf("version %x, want %x", resp.TLS.Version, version)
		}
		// One connection for all: keep-alive works over records.
		conn := string(resp.TLS.TLSUnique)
		if version == tls.VersionTLS12 {
			if i == 0 {
				firstConn = conn
			} else if conn != firstConn {
				t.Fatalf("request %d came on a new connection", i)
			}
		}
	}
}

func testTLSPython(t *testing.T, s *tlsServer) {
	script := `
import http.client, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
ctx.set_alpn_protocols(["http/1.1"])
host, port = sys.argv[2].rsplit(":", 1)
c = http.client.HTTPSConnection(host, int(port), context=ctx)
for i in range(10):
    c.request("GET", "/")
    r = c.getresponse()
    assert r.status == 200 and r.read() == b"Hello, World!", r.status
print(c.sock.version(), c.sock.selected_alpn_protocol())
`
	out := runTLSTool(t, systemPython, "-c", script, s.ca.File, s.addr)
	if !strings.HasPrefix(out, "TLSv1.3 http/1.1") {
		t.Fatalf("python: %q", out)
	}
}

func testTLSCurl(t *testing.T, s *tlsServer) {
	out := runTLSTool(t, "curl", "-sS", "--cacert", s.ca.File, "-w", " %{http_version} %{ssl_verify_result} %{num_connects}\n",
		s.url("/"), s.url("/"))
	// ALPN offers h2 first (issue 31): both requests on one HTTP/2
	// connection.
	if out != "Hello, World! 2 0 1\nHello, World! 2 0 0" {
		t.Fatalf("curl: %q", out)
	}
}

func testTLSOpenSSL(t *testing.T, s *tlsServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "openssl", "s_client", "-brief", "-ign_eof", "-CAfile", s.ca.File, "-alpn", "http/1.1",
		"-connect", s.addr, "-servername", "localhost")
	cmd.Stdin = strings.NewReader("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	out, err := cmd.CombinedOutput()
	// Exit status 0 also says the response ended with close_notify:
	// OpenSSL 3 fails an EOF without it.
	if err != nil {
		t.Fatalf("openssl s_client: %v\n%s", err, out)
	}
	for _, want := range []string{"Protocol version: TLSv1.3", "Verification: OK", "Hello, World!"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("openssl s_client output lacks %q:\n%s", want, out)
		}
	}
}

// testTLSPlainHTTP: nginx's answer to plain HTTP on the TLS port, then the
// close.
func testTLSPlainHTTP(t *testing.T, s *tlsServer) {
	out, err := rawExchange(t, s.addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "HTTP/1.1 400 ") || !strings.Contains(out, "The plain HTTP request was sent to HTTPS port") ||
		!strings.Contains(out, "Connection: close") {
		t.Fatalf("plain HTTP got %q", out)
	}
}

// testTLSGarbage: bytes that are neither TLS nor HTTP get a close and no
// answer.
func testTLSGarbage(t *testing.T, s *tlsServer) {
	out, err := rawExchange(t, s.addr, "\x00\x01\x02\x03garbage\r\n\r\n", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Fatalf("garbage got %q", out)
	}
}

func runTLSTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestTLSApps: what WSGI and ASGI apps see over TLS (the scheme, environ's
// HTTPS and SSL_* entries, the ASGI TLS extension), with and without a
// client certificate, and a request body of many records.
func TestTLSApps(t *testing.T) {
	for _, tc := range []struct{ name, target string }{{"wsgi", "tls_app:application"}, {"asgi", "tls_app:app"}} {
		t.Run(tc.name, func(t *testing.T) {
			ca := tlstest.NewCA(t, "m0serve-test")
			cert := ca.Server(t, tlstest.RSA)
			alice := ca.Client(t, "alice")
			s := startWSGI(t, tc.target, "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile,
				"--ssl-ca-certs", ca.File, "--ssl-cert-reqs", "1")
			ts := &tlsServer{server: s, ca: ca, cert: cert}
			body := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: 64 records and more
			for _, withCert := range []bool{false, true} {
				cfg := &tls.Config{}
				if withCert {
					cfg.Certificates = []tls.Certificate{alice.Pair}
				}
				client := ts.client(cfg)
				resp, err := client.Post(ts.url("/"), "text/plain", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				var got map[string]any
				if err := json.Unmarshal(readBody(t, resp), &got); err != nil {
					t.Fatal(err)
				}
				client.CloseIdleConnections()
				if got["body"] != float64(len(body)) {
					t.Fatalf("body of %v bytes, want %d", got["body"], len(body))
				}
				if tc.name == "wsgi" {
					checkTLSEnviron(t, got, withCert)
				} else {
					checkTLSScope(t, got, withCert, cert)
				}
			}
			s.stop()
			checkNoTraceback(t, s)
		})
	}
}

func checkTLSEnviron(t *testing.T, got map[string]any, withCert bool) {
	t.Helper()
	want := map[string]any{"wsgi.url_scheme": "https", "HTTPS": "on", "SSL_PROTOCOL": "TLSv1.3",
		"SSL_CIPHER": "TLS_AES_128_GCM_SHA256"}
	if withCert {
		want["SSL_CLIENT_S_DN"] = "CN=alice,O=m0serve tests"
		want["SSL_CLIENT_VERIFY"] = "SUCCESS"
	} else {
		want["SSL_CLIENT_VERIFY"] = "NONE"
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("environ[%q] = %v, want %v", k, got[k], v)
		}
	}
	pemCert, _ := got["SSL_CLIENT_CERT"].(string)
	if withCert != strings.HasPrefix(pemCert, "-----BEGIN CERTIFICATE-----") {
		t.Errorf("SSL_CLIENT_CERT = %q", pemCert)
	}
}

func checkTLSScope(t *testing.T, got map[string]any, withCert bool, server *tlstest.Issued) {
	t.Helper()
	if got["scheme"] != "https" {
		t.Errorf("scheme %v", got["scheme"])
	}
	ext, _ := got["tls"].(map[string]any)
	if ext == nil {
		t.Fatalf("no TLS extension in %v", got)
	}
	if ext["tls_version"] != float64(tls.VersionTLS13) || ext["cipher_suite"] != float64(tls.TLS_AES_128_GCM_SHA256) ||
		ext["server_cert"] != string(server.CertPEM) || ext["client_cert_error"] != nil {
		t.Errorf("TLS extension %v", ext)
	}
	chain, _ := ext["client_cert_chain"].([]any)
	if withCert {
		if len(chain) != 1 || ext["client_cert_name"] != "CN=alice,O=m0serve tests" {
			t.Errorf("with a certificate: chain of %d, name %v", len(chain), ext["client_cert_name"])
		}
	} else if len(chain) != 0 || ext["client_cert_name"] != nil {
		t.Errorf("without a certificate: chain %v, name %v", chain, ext["client_cert_name"])
	}
}

// TestTLSClientCertRequired: --ssl-cert-reqs 2 refuses a handshake
// without a certificate, or with one another CA signed.
func TestTLSClientCertRequired(t *testing.T) {
	ca := tlstest.NewCA(t, "m0serve-test")
	other := tlstest.NewCA(t, "other")
	cert := ca.Server(t, tlstest.ECDSA)
	s := start(t, variants[0], "--native", "hello", "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile,
		"--ssl-ca-certs", ca.File, "--ssl-cert-reqs", "2")
	ts := &tlsServer{server: s, ca: ca, cert: cert}
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{{"none", nil, false}, {"other-ca", []tls.Certificate{other.Client(t, "mallory").Pair}, false},
		{"trusted", []tls.Certificate{ca.Client(t, "alice").Pair}, true}} {
		resp, err := ts.client(&tls.Config{Certificates: tc.certs}).Get(ts.url("/"))
		if tc.ok != (err == nil) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err == nil {
			readBody(t, resp)
		}
	}
}

// TestTLSStartErrors: a TLS setting that cannot work is one line naming
// the flag, and exit status 2.
func TestTLSStartErrors(t *testing.T) {
	ca := tlstest.NewCA(t, "m0serve-test")
	cert := ca.Server(t, tlstest.ECDSA)
	other := ca.Server(t, tlstest.ECDSA)
	encrypted := ca.EncryptedKeyFile(t, cert, "sesame")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing-file", []string{"--ssl-certfile", "/nonexistent/cert.pem", "--ssl-keyfile", cert.KeyFile}, "--ssl-certfile: "},
		{"key-mismatch", []string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", other.KeyFile}, "--ssl-keyfile: the key does not match"},
		{"wrong-password", []string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", encrypted, "--ssl-keyfile-password", "nope"}, "--ssl-keyfile-password: wrong password"},
		{"no-password", []string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", encrypted}, "--ssl-keyfile-password: "},
		{"cert-reqs-without-ca", []string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile, "--ssl-cert-reqs", "2"}, "--ssl-cert-reqs: "},
		{"key-without-cert", []string{"--ssl-keyfile", cert.KeyFile}, "--ssl-keyfile: needs --ssl-certfile"},
		{"bad-cipher", []string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile, "--ssl-ciphers", "RC4-MD5"}, "--ssl-ciphers: "},
		{"tls11", []string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile, "--ssl-protocol-min", "tls1.1"}, "--ssl-protocol-min: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runToExit(t, cleanEnv(), append([]string{"--native", "hello", "--port", "0"}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, output %q; want 2 and one line with %q", code, out, tc.want)
			}
		})
	}
	// The right password starts.
	s := start(t, variants[0], "--native", "hello", "--ssl-certfile", cert.CertFile, "--ssl-keyfile", encrypted,
		"--ssl-keyfile-password", "sesame")
	ts := &tlsServer{server: s, ca: ca, cert: cert}
	resp, err := ts.client(nil).Get(ts.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
}

// TestTLSHeaderTimeout: a client that connects and never says hello, or
// stops half way through its hello, is closed at --header-timeout.
func TestTLSHeaderTimeout(t *testing.T) {
	s := startTLS(t, variants[0], tlstest.ECDSA, "--native", "hello", "--header-timeout", "1s")
	for _, sent := range []string{"", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"} {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(sent))
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Read(make([]byte, 100))
		c.Close()
		if n != 0 || err != io.EOF {
			t.Fatalf("after %q: read %d, %v; want the server's close", sent, n, err)
		}
	}
}

// TestTLSReload: SIGHUP reloads the certificate and key; a new connection
// gets the new one, an open one carries on, and a pair that does not
// load leaves the old one in place, with the reason in the log. In a
// single process and under --workers (a rolling reload).
func TestTLSReload(t *testing.T) {
	for _, workers := range []bool{false, true} {
		t.Run(map[bool]string{false: "single", true: "workers"}[workers], func(t *testing.T) {
			ca := tlstest.NewCA(t, "m0serve-test")
			first, second := ca.Server(t, tlstest.ECDSA), ca.Server(t, tlstest.RSA)
			dir := t.TempDir()
			certFile, keyFile := dir+"/cert.pem", dir+"/key.pem"
			writeFile(t, certFile, string(first.CertPEM))
			writeFile(t, keyFile, string(first.KeyPEM))
			args := []string{"--ssl-certfile", certFile, "--ssl-keyfile", keyFile}
			var s *server
			var hup func()
			if workers {
				ws := startWorkersApp(t, appsDir(t), "tls_app:application", nil, append(args, "--workers", "2")...)
				s, hup = ws.server, func() { ws.signal(t, syscall.SIGHUP) }
			} else {
				s = startWSGI(t, "tls_app:application", args...)
				hup = func() {
					if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
						t.Fatal(err)
					}
				}
			}
			serial := func() string {
				c, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
			}
			if serial() != first.Cert.SerialNumber.String() {
				t.Fatal("not serving the first certificate")
			}
			open, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
			if err != nil {
				t.Fatal(err)
			}
			defer open.Close()

			// A half-written pair (the new certificate, the old key) stays out.
			writeFile(t, certFile, string(second.CertPEM))
			hup()
			waitLogLine(t, s, "does not match")
			if serial() != first.Cert.SerialNumber.String() {
				t.Fatal("a pair that does not load replaced the certificate")
			}
			writeFile(t, keyFile, string(second.KeyPEM))
			hup()
			want := second.Cert.SerialNumber.String()
			deadline := time.Now().Add(60 * time.Second)
			for serial() != want {
				if time.Now().After(deadline) {
					t.Fatalf("the new certificate was not served:\n%s", s.logs)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !workers {
				// The connection opened before the reload still works.
				open.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
				resp, err := http.ReadResponse(bufio.NewReader(open), nil)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("the open connection: %v", err)
				}
				readBody(t, resp)
			}
		})
	}
}

func waitLogLine(t *testing.T, s *server, substr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.logs.String(), substr) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", substr, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
