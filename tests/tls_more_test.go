//go:build linux

package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// TestTLSWebSocket: wss to --native ws-echo and to an ASGI app (its scope
// says wss and carries the TLS extension), with Go's coder/websocket and
// Node's ws.
func TestTLSWebSocket(t *testing.T) {
	native := startTLS(t, variants[0], tlstest.ECDSA, "--native", "ws-echo", "--ws-max-size=1M")
	ca := native.ca
	cert := ca.Server(t, tlstest.ECDSA)
	asgi := &tlsServer{server: startWSGI(t, "tls_app:app", "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile), ca: ca, cert: cert}
	dial := func(s *tlsServer) *coder.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, _, err := coder.Dial(ctx, "wss://"+s.addr+"/", &coder.DialOptions{HTTPClient: s.client(nil)})
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadLimit(4 << 20)
		return c
	}
	echo := func(c *coder.Conn, msg []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Write(ctx, coder.MessageBinary, msg); err != nil {
			t.Fatal(err)
		}
		_, got, err := c.Read(ctx)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo of %d bytes: got %d, %v", len(msg), len(got), err)
		}
	}
	big := bytes.Repeat([]byte("0123456789"), 50000) // many records each way
	c := dial(native)
	echo(c, []byte("hello"))
	echo(c, big)
	c.Close(coder.StatusNormalClosure, "")

	c = dial(asgi)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, first, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var scope map[string]any
	if err := json.Unmarshal(first, &scope); err != nil || scope["scheme"] != "wss" || scope["tls_version"] != float64(tls.VersionTLS13) {
		t.Fatalf("the app's first message: %s (%v)", first, err)
	}
	echo(c, big)
	c.Close(coder.StatusNormalClosure, "")

	t.Run("node", func(t *testing.T) {
		node := nodeWithWS(t)
		t.Setenv("NODE_EXTRA_CA_CERTS", ca.File)
		runNodeClient(t, node, "wss://"+native.addr+"/")
	})
}

// TestTLSStaticFiles: file bodies over TLS are read and sealed (no
// splice): --static-path-mount with a range, and wsgi.file_wrapper, on
// each backend, byte for byte.
func TestTLSStaticFiles(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+12345) // more than one read chunk
	rand.Read(data)
	path := filepath.Join(dir, "blob.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []variant{variants[0], variants[1]} {
		t.Run(v.name, func(t *testing.T) {
			ca := tlstest.NewCA(t, "m0serve-test")
			cert := ca.Server(t, tlstest.ECDSA)
			v.env = append(v.env, "E2E_DIR="+dir)
			s := start(t, v, "--app-dir", appsDir(t), "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile,
				"--static-path-mount", dir, "--static-path-route", "/assets", "file_app:app")
			ts := &tlsServer{server: s, ca: ca, cert: cert}
			client := ts.client(nil)
			defer client.CloseIdleConnections()
			get := func(url string, header ...string) (*http.Response, []byte) {
				req, _ := http.NewRequest("GET", url, nil)
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp, readBody(t, resp)
			}
			for i := 0; i < 2; i++ { // twice: the connection is reused after a file body
				if resp, body := get(ts.url("/assets/blob.bin")); resp.StatusCode != 200 || !bytes.Equal(body, data) {
					t.Fatalf("static: %d, %d bytes", resp.StatusCode, len(body))
				}
			}
			if resp, body := get(ts.url("/assets/blob.bin"), "Range", "bytes=1000000-1000099"); resp.StatusCode != 206 || !bytes.Equal(body, data[1000000:1000100]) {
				t.Fatalf("range: %d %d", resp.StatusCode, len(body))
			}
			for _, route := range []string{"/sized?", "/?"} { // Content-Length, and chunked
				if resp, body := get(ts.url(route + path)); resp.StatusCode != 200 || !bytes.Equal(body, data) {
					t.Fatalf("file_wrapper %s: %d, %d bytes", route, resp.StatusCode, len(body))
				}
			}
		})
	}
}

// TestTLSUnixSocket: TLS on --uds, with curl.
func TestTLSUnixSocket(t *testing.T) {
	ca := tlstest.NewCA(t, "m0serve-test")
	cert := ca.Server(t, tlstest.ECDSA)
	sock := filepath.Join(t.TempDir(), "m0.sock")
	cmd := exec.Command(binary, "--uds", sock, "--native", "hello", "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile)
	cmd.Env = cleanEnv()
	launch(t, cmd, "m0serve", regexp.MustCompile(`serving on unix:`), 1)
	out := runTLSTool(t, "curl", "-sS", "--cacert", ca.File, "--unix-socket", sock, "https://localhost/")
	if out != "Hello, World!" {
		t.Fatalf("curl over the Unix socket: %q", out)
	}
}

// TestTLSScan: sslscan (Debian) finds no protocol below TLS 1.2 and no
// suite without forward secrecy or AEAD-or-HMAC, and with
// --ssl-protocol-min tls1.3 nothing below 1.3.
func TestTLSScan(t *testing.T) {
	requireCommand(t, "/usr/bin/sslscan")
	for _, min := range []string{"tls1.2", "tls1.3"} {
		t.Run(min, func(t *testing.T) {
			s := startTLS(t, variants[0], tlstest.ECDSA, "--native", "hello", "--ssl-protocol-min", min)
			out := runTLSTool(t, "/usr/bin/sslscan", "--no-colour", s.addr)
			want := map[string]string{"SSLv2": "disabled", "SSLv3": "disabled", "TLSv1.0": "disabled", "TLSv1.1": "disabled",
				"TLSv1.2": map[string]string{"tls1.2": "enabled", "tls1.3": "disabled"}[min], "TLSv1.3": "enabled"}
			for proto, state := range want {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(proto) + `\s+` + state + `$`).MatchString(out) {
					t.Errorf("%s is not %s:\n%s", proto, state, out)
				}
			}
			accepted := regexp.MustCompile(`(?m)^(?:Preferred|Accepted)\s+(TLSv[0-9.]+)\s+\d+ bits\s+(\S+)`).FindAllStringSubmatch(out, -1)
			if len(accepted) == 0 {
				t.Fatalf("no suite found:\n%s", out)
			}
			for _, m := range accepted {
				proto, suite := m[1], m[2]
				ok := proto == "TLSv1.3" && strings.HasPrefix(suite, "TLS_") ||
					proto == "TLSv1.2" && min == "tls1.2" && strings.HasPrefix(suite, "ECDHE-")
				if !ok || regexp.MustCompile(`RC4|DES|NULL|EXP|MD5|anon`).MatchString(suite) {
					t.Errorf("accepted %s %s", proto, suite)
				}
			}
		})
	}
}

// TestTLSFuzz: a bounded live fuzz of the TLS port: random bytes, a
// hello cut short, a real handshake followed by random and truncated
// records. Every connection is closed by the server (none left hanging
// past --header-timeout), and the server still serves afterwards.
func TestTLSFuzz(t *testing.T) {
	for _, v := range []variant{variants[0], variants[1]} {
		t.Run(v.name, func(t *testing.T) {
			s := startTLS(t, v, tlstest.ECDSA, "--native", "hello", "--header-timeout", "2s", "--keepalive-timeout", "2s")
			// A real client hello to cut and corrupt.
			hello := captureHello(t, s.ca)
			const rounds = 120
			var wg sync.WaitGroup
			errs := make(chan error, rounds)
			sem := make(chan struct{}, 16)
			for i := 0; i < rounds; i++ {
				wg.Add(1)
				sem <- struct{}{}
				go func(i int) {
					defer wg.Done()
					defer func() { <-sem }()
					if err := fuzzOne(s, hello, i); err != nil {
						errs <- fmt.Errorf("round %d: %w", i, err)
					}
				}(i)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			resp, err := s.client(nil).Get(s.url("/"))
			if err != nil {
				t.Fatalf("after the fuzz: %v\n%s", err, s.logs)
			}
			if body := readBody(t, resp); string(body) != "Hello, World!" {
				t.Fatalf("after the fuzz: %q", body)
			}
		})
	}
}

func fuzzBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func randomInt(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}

// fuzzOne sends one kind of bad input and waits for the server's close.
func fuzzOne(s *tlsServer, hello []byte, i int) error {
	c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	switch i % 6 {
	case 0: // random bytes
		c.Write(fuzzBytes(1 + randomInt(4096)))
	case 1: // a hello cut short
		c.Write(hello[:1+randomInt(len(hello)-1)])
	case 2: // a hello with bytes flipped
		h := bytes.Clone(hello)
		for k := 0; k < 1+randomInt(8); k++ {
			h[randomInt(len(h))] ^= byte(1 + randomInt(255))
		}
		c.Write(h)
	case 3: // a handshake record header announcing more than arrives
		c.Write([]byte{0x16, 0x03, 0x01, 0x40, 0x00})
		c.Write(fuzzBytes(randomInt(100)))
	default: // a real handshake, then random or truncated records
		tc := tls.Client(c, &tls.Config{RootCAs: s.ca.Pool, ServerName: "localhost", NextProtos: []string{"http/1.1"}})
		tc.SetDeadline(time.Now().Add(20 * time.Second))
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		if i%6 == 4 {
			c.Write(append([]byte{0x17, 0x03, 0x03, 0x00, 0x40}, fuzzBytes(0x40)...)) // fails to authenticate
		} else {
			c.Write(append([]byte{0x17, 0x03, 0x03, 0x10, 0x00}, fuzzBytes(100)...)) // never completes
		}
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return fmt.Errorf("kind %d: the server left the connection open", i%6)
	}
	return nil // EOF or a reset: closed
}

// captureHello records the ClientHello a Go client sends.
func captureHello(t *testing.T, ca *tlstest.CA) []byte {
	server, client := net.Pipe()
	defer server.Close()
	go func() {
		tls.Client(client, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}).Handshake()
		client.Close()
	}()
	buf := make([]byte, 4096)
	server.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := server.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// trustInNSS makes the NSS database Chromium reads under home
// ($HOME/.pki/nssdb) trust the CA certificates (certutil, Debian's
// libnss3-tools).
func trustInNSS(t *testing.T, home string, caFiles []string) {
	t.Helper()
	requireCommand(t, "/usr/bin/certutil")
	db := filepath.Join(home, ".pki", "nssdb")
	if err := os.MkdirAll(db, 0o700); err != nil {
		t.Fatal(err)
	}
	runTLSTool(t, "/usr/bin/certutil", "-d", "sql:"+db, "-N", "--empty-password")
	for i, ca := range caFiles {
		runTLSTool(t, "/usr/bin/certutil", "-d", "sql:"+db, "-A", "-t", "C,,", "-n", fmt.Sprintf("m0serve-test-%d", i), "-i", ca)
	}
}

// TestTLSBrowser: headless Chromium, trusting a test CA, loads an https
// page from an ASGI app over TLS and echoes through wss to that app and
// to --native ws-echo, as TestWebSocketBrowser does in the clear.
func TestTLSBrowser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	requireCommand(t, chromium)
	native := startTLS(t, variants[0], tlstest.ECDSA, "--native", "ws-echo")
	cert := native.ca.Server(t, tlstest.RSA)
	page := t.TempDir()
	v := variants[0]
	v.env = append(append([]string{}, v.env...), "E2E_DIR="+page)
	asgi := start(t, v, "--app-dir", appsDir(t), "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile, "asgi_ws_echo_app:app")
	targets := fmt.Sprintf(`[["native", "wss://%s/"], ["asgi", "wss://%s/"]]`, native.addr, asgi.addr)
	if err := os.WriteFile(filepath.Join(page, "echo.html"), []byte(strings.ReplaceAll(browserPage, "TARGETS", targets)), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runBrowser(t, chromium, "https://"+asgi.addr+"/echo.html", native.ca.File)
	var want []string
	for _, name := range []string{"native", "asgi"} {
		want = append(want,
			name+" open protocol=chat.v1 extensions=permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			name+" text text é✓",
			name+" binary 0,1,255",
			name+" big true",
			name+" close 4001 clean=true")
	}
	want = append(want, "DONE")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the browser reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTLSProxyHeaders: with --proxy-headers, a trusted proxy's
// X-Forwarded-Proto still sets the scheme over TLS; HTTPS and SSL_*
// describe the connection itself, as mod_ssl's do.
func TestTLSProxyHeaders(t *testing.T) {
	ca := tlstest.NewCA(t, "m0serve-test")
	cert := ca.Server(t, tlstest.ECDSA)
	s := &tlsServer{server: startWSGI(t, "tls_app:application", "--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile,
		"--proxy-headers"), ca: ca, cert: cert}
	req, _ := http.NewRequest("GET", s.url("/"), nil)
	req.Header.Set("X-Forwarded-Proto", "http")
	resp, err := s.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(readBody(t, resp), &got); err != nil {
		t.Fatal(err)
	}
	if got["wsgi.url_scheme"] != "http" || got["HTTPS"] != "on" || got["SSL_PROTOCOL"] != "TLSv1.3" {
		t.Fatalf("environ %v", got)
	}
}
