//go:build linux

package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/m0serve/m0serve/tlsrec/tlstest"
	xhttp2 "golang.org/x/net/http2"
)

// h2Server is a server under HTTP/2 test and how its clients reach it.
type h2Server struct {
	*server
	tls    bool
	ca     *tlstest.CA // with tls
	native bool        // --native echo (?raw echoes the body) or slow; else tests/apps/h2_app.py
	dials  atomic.Int32
}

func (s *h2Server) url(path string) string {
	if s.tls {
		return "https://" + s.addr + path
	}
	return "http://" + s.addr + path
}

// client is Go's net/http client speaking HTTP/2 alone: h2c by prior
// knowledge, or h2 over TLS by ALPN; it counts the connections it opens.
func (s *h2Server) client() *http.Client {
	var protocols http.Protocols
	tr := &http.Transport{Protocols: &protocols}
	if s.tls {
		protocols.SetHTTP2(true)
		tr.TLSClientConfig = &tls.Config{RootCAs: s.ca.Pool}
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		s.dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr, Timeout: 120 * time.Second}
}

// curl runs curl over HTTP/2 (prior knowledge in the clear, ALPN over
// TLS) with args, then the URL.
func (s *h2Server) curl(t *testing.T, path string, args ...string) string {
	t.Helper()
	if s.tls {
		args = append(args, "--http2", "--cacert", s.ca.File)
	} else {
		args = append(args, "--http2-prior-knowledge")
	}
	args = append(append([]string{"-sS", "--max-time", "60"}, args...), s.url(path))
	out, err := exec.Command("curl", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("curl %q: %v\n%s", args, err, out)
	}
	return string(out)
}

func startH2(t *testing.T, v variant, useTLS bool, args ...string) *h2Server {
	t.Helper()
	s := &h2Server{tls: useTLS}
	for _, a := range args {
		s.native = s.native || a == "--native"
	}
	if useTLS {
		s.ca = tlstest.NewCA(t, "m0serve-test")
		cert := s.ca.Server(t, tlstest.ECDSA)
		args = append([]string{"--ssl-certfile", cert.CertFile, "--ssl-keyfile", cert.KeyFile}, args...)
	}
	if !s.native {
		args = append([]string{"--app-dir", appsDir(t)}, args...)
	}
	s.server = start(t, v, args...)
	return s
}

// h2Reply is what h2_app.py answers about a request.
type h2Reply struct {
	Protocol string `json:"protocol"`
	Method   string `json:"method"`
	Path     string `json:"path"`
	Host     string `json:"host"`
	Scheme   string `json:"scheme"`
	Length   int    `json:"length"`
	SHA256   string `json:"sha256"`
}

// checkEcho checks the answer to an upload of body: the native echo's
// raw body, or the app's account of it.
func (s *h2Server) checkEcho(t *testing.T, got, body []byte, protocol string) {
	t.Helper()
	if s.native {
		if !bytes.Equal(got, body) {
			t.Fatalf("echoed %d bytes, sent %d (equal: false)", len(got), len(body))
		}
		return
	}
	var r h2Reply
	if err := json.Unmarshal(got, &r); err != nil {
		t.Fatalf("%v: %q", err, got)
	}
	sum := sha256.Sum256(body)
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	if r.Length != len(body) || r.SHA256 != hex.EncodeToString(sum[:]) || r.Protocol != protocol ||
		r.Host != s.addr || r.Scheme != scheme {
		t.Fatalf("the app saw %+v; want %d bytes, protocol %q, host %s, scheme %s", r, len(body), protocol, s.addr, scheme)
	}
}

// uploadBody is n bytes that are not all alike.
func uploadBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>10)
	}
	return b
}

// TestHTTP2Native: --native echo and hello over h2c and TLS, on each
// backend: curl, nghttp and Go's client, streams at once on one
// connection, a reset mid-response and a Rapid Reset burst, HTTP/1.1
// beside HTTP/2 on the same port.
func TestHTTP2Native(t *testing.T) {
	for _, v := range []variant{variants[0], variants[1], variants[5]} {
		for _, useTLS := range []bool{false, true} {
			name := v.name + "/h2c"
			if useTLS {
				name = v.name + "/tls"
			}
			t.Run(name, func(t *testing.T) {
				static := t.TempDir()
				file := uploadBody(3 << 20)
				if err := os.WriteFile(filepath.Join(static, "file.bin"), file, 0o644); err != nil {
					t.Fatal(err)
				}
				s := startH2(t, v, useTLS, "--native", "echo", "--static-path-mount", static, "--static-path-route", "/static")
				t.Run("curl", func(t *testing.T) { testH2Curl(t, s, "") })
				t.Run("static", func(t *testing.T) { testH2Static(t, s, file) })
				t.Run("nghttp", func(t *testing.T) { testH2Nghttp(t, s) })
				t.Run("concurrent", func(t *testing.T) { testH2Concurrent(t, s, "") })
				t.Run("http1-beside", func(t *testing.T) { testH2BesideHTTP1(t, s) })
				t.Run("floods", func(t *testing.T) { testH2Floods(t, s) })
				s.stop()
				// A response that goes on (a chunk a millisecond, for a
				// minute) to reset, alone and in a burst.
				slow := startH2(t, v, useTLS, "--native", "slow")
				t.Run("reset", func(t *testing.T) { testH2Reset(t, slow, slowPath) })
				t.Run("rapid-reset", func(t *testing.T) { testH2RapidReset(t, slow) })
				slow.stop()
			})
		}
	}
}

const slowPath = "/slow?ms=60000&chunks=60000"

// TestHTTP2Apps: a WSGI and an ASGI app over h2c and TLS: what the app
// sees (SERVER_PROTOCOL HTTP/2, http_version "2"), uploads and streamed
// downloads at once on one connection, a reset mid-download.
func TestHTTP2Apps(t *testing.T) {
	for _, app := range []struct{ name, target, protocol string }{
		{"wsgi", "h2_app:application", "HTTP/2"},
		{"asgi", "h2_app:app", "2"},
	} {
		for _, useTLS := range []bool{false, true} {
			name := app.name + "/h2c"
			if useTLS {
				name = app.name + "/tls"
			}
			t.Run(name, func(t *testing.T) {
				s := startH2(t, wsgiVariant(), useTLS, app.target)
				t.Run("curl", func(t *testing.T) { testH2Curl(t, s, app.protocol) })
				t.Run("nghttp", func(t *testing.T) { testH2Nghttp(t, s) })
				t.Run("concurrent", func(t *testing.T) { testH2Concurrent(t, s, app.protocol) })
				t.Run("reset", func(t *testing.T) { testH2Reset(t, s, "/size/1000000000") })
				t.Run("http1-beside", func(t *testing.T) { testH2BesideHTTP1(t, s) })
				checkNoTraceback(t, s.server)
			})
		}
	}
}

func testH2Curl(t *testing.T, s *h2Server, protocol string) {
	body := uploadBody(3 << 20)
	path := "/upload?raw"
	cmd := exec.Command("curl", "-sS", "--max-time", "60", "--data-binary", "@-", "-o", "-", "-w", "\n%{http_version}")
	if s.tls {
		cmd.Args = append(cmd.Args, "--http2", "--cacert", s.ca.File)
	} else {
		cmd.Args = append(cmd.Args, "--http2-prior-knowledge")
	}
	cmd.Args = append(cmd.Args, s.url(path))
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	i := bytes.LastIndexByte(out, '\n')
	if version := string(out[i+1:]); version != "2" {
		t.Fatalf("curl spoke HTTP %s", version)
	}
	s.checkEcho(t, out[:i], body, protocol)
	if !s.native {
		n := s.curl(t, "/size/5000000", "-o", "/dev/null", "-w", "%{http_version} %{size_download}")
		if n != "2 5000000" {
			t.Fatalf("curl download: %q", n)
		}
	}
}

func testH2Nghttp(t *testing.T, s *h2Server) {
	out, err := exec.Command("nghttp", "-nv", s.url("/a"), s.url("/b?x")).CombinedOutput()
	if err != nil {
		t.Fatalf("nghttp: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), ":status: 200"); n != 2 {
		t.Fatalf("nghttp: %d responses of 200, want 2\n%s", n, out)
	}
}

// testH2Concurrent: one connection carries a large upload beside small
// requests (and, for the apps, a streamed download): flow control both
// ways lets each go on.
func testH2Concurrent(t *testing.T, s *h2Server, protocol string) {
	client := s.client()
	defer client.CloseIdleConnections()
	// One request first, so the rest share its connection.
	resp, err := client.Get(s.url("/first"))
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	dials := s.dials.Load()
	big := uploadBody(24 << 20)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	do := func(req *http.Request, check func([]byte) error) {
		defer wg.Done()
		resp, err := client.Do(req)
		if err != nil {
			errs <- err
			return
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != 200 || resp.ProtoMajor != 2) {
			err = fmt.Errorf("%s %s: %s over %s", req.Method, req.URL.Path, resp.Status, resp.Proto)
		}
		if err == nil {
			err = check(got)
		}
		if err != nil {
			errs <- err
		}
	}
	wg.Add(1)
	up, _ := http.NewRequest("POST", s.url("/upload?raw"), bytes.NewReader(big))
	var upGot []byte
	go do(up, func(b []byte) error { upGot = b; return nil })
	if !s.native {
		wg.Add(1)
		down, _ := http.NewRequest("GET", s.url("/size/8000000"), nil)
		go do(down, func(b []byte) error {
			if len(b) != 8000000 {
				return fmt.Errorf("download of %d bytes, want 8000000", len(b))
			}
			return nil
		})
	}
	for i := 0; i < 20; i++ {
		wg.Add(1)
		small := []byte(fmt.Sprintf("small %d", i))
		req, _ := http.NewRequest("POST", s.url(fmt.Sprintf("/small/%d?raw", i)), bytes.NewReader(small))
		go do(req, func(b []byte) error {
			if s.native && !bytes.Equal(b, small) {
				return fmt.Errorf("small %d: %q", i, b)
			}
			return nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	s.checkEcho(t, upGot, big, protocol)
	if n := s.dials.Load(); n != dials {
		t.Fatalf("%d connections opened for the concurrent requests, want none beyond the first", n-dials)
	}
}

// testH2Static: a static file (a file body the loop reads, since no
// sendfile goes between frames), whole and a range.
func testH2Static(t *testing.T, s *h2Server, file []byte) {
	client := s.client()
	defer client.CloseIdleConnections()
	resp, err := client.Get(s.url("/static/file.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readBody(t, resp); resp.ProtoMajor != 2 || !bytes.Equal(got, file) {
		t.Fatalf("%s over %s: %d bytes (equal: false)", resp.Status, resp.Proto, len(got))
	}
	req, _ := http.NewRequest("GET", s.url("/static/file.bin"), nil)
	req.Header.Set("Range", "bytes=1000000-1000099")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := readBody(t, resp); resp.StatusCode != 206 || !bytes.Equal(got, file[1000000:1000100]) {
		t.Fatalf("range: %s, %q", resp.Status, got)
	}
}

// testH2Reset: the client resets a stream mid-response (RST_STREAM
// CANCEL, as closing the body does in Go's client); the connection and
// the server serve on.
func testH2Reset(t *testing.T, s *h2Server, path string) {
	client := s.client()
	defer client.CloseIdleConnections()
	resp, err := client.Get(s.url(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	dials := s.dials.Load()
	for i := 0; i < 3; i++ {
		resp, err := client.Post(s.url("/after?raw"), "text/plain", strings.NewReader("after"))
		if err != nil {
			t.Fatal(err)
		}
		if got := readBody(t, resp); resp.StatusCode != 200 {
			t.Fatalf("after the reset: %s %q", resp.Status, got)
		}
	}
	if s.dials.Load() != dials {
		t.Fatal("the reset cost the connection")
	}
}

// testH2BesideHTTP1: HTTP/1.1 on the same port (over TLS, by ALPN).
func testH2BesideHTTP1(t *testing.T, s *h2Server) {
	tr := &http.Transport{}
	if s.tls {
		tr.TLSClientConfig = &tls.Config{RootCAs: s.ca.Pool, NextProtos: []string{"http/1.1"}}
	}
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Post(s.url("/h1?raw"), "text/plain", strings.NewReader("one"))
	if err != nil {
		t.Fatal(err)
	}
	got := readBody(t, resp)
	if resp.StatusCode != 200 || resp.ProtoMajor != 1 || s.native && string(got) != "one" {
		t.Fatalf("HTTP/1.1: %s over %s, %q", resp.Status, resp.Proto, got)
	}
	if !s.native && !strings.Contains(string(got), `"HTTP/1.1"`) && !strings.Contains(string(got), `"1.1"`) {
		t.Fatalf("the app saw %s", got)
	}
}

// TestHTTP2Off: with --http 1 the preface is no request (HTTP/1.1's 505
// for its version), and TLS offers http/1.1 alone.
func TestHTTP2Off(t *testing.T) {
	s := startH2(t, variants[0], false, "--http", "1", "--native", "hello")
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, xhttp2.ClientPreface)
	got, _ := io.ReadAll(c)
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 505 ")) {
		t.Fatalf("--http 1 answered the preface with %q", got)
	}
	s.stop()
	ts := startH2(t, variants[0], true, "--http", "1", "--native", "hello")
	out := ts.curl(t, "/", "-w", " %{http_version}")
	if out != "Hello, World! 1.1" {
		t.Fatalf("curl --http2 with --http 1: %q", out)
	}
	ts.stop()
}

// TestHTTP2Shutdown: SIGTERM sends the two-step GOAWAY (RFC 9113 §6.8):
// first the largest stream id and a PING, then, once the PING is
// answered, the last stream served; the stream in flight finishes, then
// the connection closes and the server exits.
func TestHTTP2Shutdown(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			s := startH2(t, variants[0], useTLS, "--native", "slow")
			c := dialH2(t, s)
			if err := c.request(1, s.addr, "/slow?ms=2000&chunks=4"); err != nil {
				t.Fatal(err)
			}
			var goAways []uint32
			var data []byte
			headers, ended := false, false
			for !ended || len(goAways) < 2 {
				f, err := c.fr.ReadFrame()
				if err != nil {
					t.Fatalf("after GOAWAYs %v, %d bytes (ended %v): %v", goAways, len(data), ended, err)
				}
				switch f := f.(type) {
				case *xhttp2.HeadersFrame:
					if !headers {
						headers = true
						s.cmd.Process.Signal(syscall.SIGTERM)
					}
				case *xhttp2.DataFrame:
					data = append(data, f.Data()...)
					ended = f.StreamEnded()
				case *xhttp2.GoAwayFrame:
					goAways = append(goAways, f.LastStreamID)
					if f.ErrCode != xhttp2.ErrCodeNo {
						t.Fatalf("GOAWAY %v", f.ErrCode)
					}
				case *xhttp2.PingFrame:
					if !f.IsAck() {
						c.fr.WritePing(true, f.Data)
					}
				}
			}
			if goAways[0] != 1<<31-1 || goAways[1] != 1 {
				t.Fatalf("GOAWAYs named %v, want [2147483647 1]", goAways)
			}
			if string(data) != "chunk 0\nchunk 1\nchunk 2\nchunk 3\n" {
				t.Fatalf("the stream in flight got %q", data)
			}
			// Then the close.
			for {
				if _, err := c.fr.ReadFrame(); err != nil {
					break
				}
			}
			if err := s.waitExit(60 * time.Second); err != nil {
				t.Fatalf("exit: %v\n%s", err, s.logs)
			}
		})
	}
}

// h2Page reports how headless Chromium reached the page and a resource
// it fetches (performance's nextHopProtocol), as runBrowser reads it.
const h2Page = `<!doctype html><html><body><script>
console.log("WS page " + performance.getEntriesByType("navigation")[0].nextHopProtocol);
fetch("/static/h2.html?again").then(r => r.text()).then(() => {
  const e = performance.getEntriesByType("resource").find(r => r.name.includes("again"));
  console.log("WS fetch " + (e ? e.nextHopProtocol : "none"));
  console.log("WS DONE");
});
</script></body></html>`

// TestHTTP2Browser: headless Chromium gets the page and a fetch over h2
// by ALPN.
func TestHTTP2Browser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	requireCommand(t, chromium)
	static := t.TempDir()
	if err := os.WriteFile(filepath.Join(static, "h2.html"), []byte(h2Page), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startH2(t, variants[0], true, "--native", "hello", "--static-path-mount", static, "--static-path-route", "/static")
	got := runBrowser(t, chromium, s.url("/static/h2.html"), s.ca.File)
	if strings.Join(got, "\n") != "page h2\nfetch h2\nDONE" {
		t.Fatalf("the browser reported %q, want h2 for the page and the fetch", got)
	}
	s.stop()
}

// nodeH2Client posts a body over h2c with Node's http2 module and prints
// the status and the body.
const nodeH2Client = `
const http2 = require("http2");
const c = http2.connect("http://" + process.argv[1]);
c.on("error", e => { console.error(e); process.exit(1); });
const req = c.request({":method": "POST", ":path": "/node", "content-type": "text/plain"});
let body = "";
req.setEncoding("utf8");
req.on("response", h => console.log(h[":status"]));
req.on("data", d => body += d);
req.on("end", () => { console.log(body); c.close(); });
req.end("from node");
`

// TestHTTP2NodeAndAccessLog: Node's http2 client against a WSGI app, and
// the access log's lines for HTTP/2 requests, the loop's own 413 among
// them.
func TestHTTP2NodeAndAccessLog(t *testing.T) {
	requireCommand(t, "node")
	s := startH2(t, wsgiVariant(), false, "--access-log", "--max-body-size", "16", "h2_app:application")
	out, err := exec.Command("node", "-e", nodeH2Client, s.addr).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	status, body, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if status != "200" {
		t.Fatalf("node: %q", out)
	}
	s.checkEcho(t, []byte(body), []byte("from node"), "HTTP/2")
	if got := s.curl(t, "/big", "-d", strings.Repeat("x", 100), "-o", "/dev/null", "-w", "%{http_code}"); got != "413" {
		t.Fatalf("a body over --max-body-size: %q", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, re := range []*regexp.Regexp{accessLine("POST /node HTTP/2.0", "200"), accessLine("POST /big HTTP/2.0", "413")} {
		for !re.MatchString(s.logs.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("no access-log line matching %s:\n%s", re, s.logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	checkNoTraceback(t, s.server)
}
