//go:build linux

package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// seen is what tests/apps/proxy_app.py says the server told the app.
type seen struct {
	Addr, Port, Scheme string
}

// clientFrom is an HTTP client whose connections come from local, a
// loopback address of its own (Linux routes all of 127.0.0.0/8 to lo), so
// one test has a trusted and an untrusted peer.
func clientFrom(local string) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	return &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true},
	}
}

func askProxyApp(t *testing.T, client *http.Client, s *server, fields ...string) seen {
	t.Helper()
	req, err := http.NewRequest("GET", s.url("/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		req.Header.Add(fields[i], fields[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.logs)
	}
	var got seen
	if err := json.Unmarshal(readBody(t, resp), &got); err != nil {
		t.Fatalf("%v\n%s", err, s.logs)
	}
	return got
}

// TestProxyHeaders: a trusted proxy's chain names the client and scheme,
// for WSGI (handler threads and --threads 0) and ASGI; the same fields
// from an untrusted peer, or with --proxy-headers off, change nothing;
// Forwarded is read only under --forwarded-headers forwarded, and then
// X-Forwarded-* is not.
func TestProxyHeaders(t *testing.T) {
	trusted, untrusted := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")
	chain := []string{
		"X-Forwarded-For", "198.51.100.1, 203.0.113.7",
		"X-Forwarded-For", "10.1.2.3",
		"X-Forwarded-Proto", "https",
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"wsgi", []string{"proxy_app:app"}},
		{"wsgi-inline", []string{"--threads", "0", "proxy_app:app"}},
		{"asgi", []string{"--interface", "asgi", "--lifespan", "off", "proxy_app:asgi_app"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--proxy-headers", "--forwarded-allow-ips", "127.0.0.1, 10.0.0.0/8", "--access-log"}, c.args...)
			s := startWSGI(t, args[0], args[1:]...)
			// Past the trusted proxy 10.1.2.3 to the first untrusted hop:
			// 198.51.100.1 is whatever the client wrote, not believed.
			if got := askProxyApp(t, trusted, s, chain...); got != (seen{"203.0.113.7", "0", "https"}) {
				t.Errorf("trusted chain: app saw %+v", got)
			}
			forwarded := []string{"Forwarded", `for="[2001:db8::17]:4711";proto=https, for=10.9.9.9;proto=http`}
			if got := askProxyApp(t, trusted, s, forwarded...); got.Addr != "127.0.0.1" || got.Scheme != "http" {
				t.Errorf("Forwarded under x-forwarded: app saw %+v", got)
			}
			forged := append(chain, "Forwarded", "for=192.0.2.1;proto=https")
			got := askProxyApp(t, untrusted, s, forged...)
			if got.Addr != "127.0.0.2" || got.Port == "0" || got.Scheme != "http" {
				t.Errorf("forged by an untrusted peer: app saw %+v", got)
			}
			s.stop()
			logs := s.logs.String()
			if !strings.Contains(logs, "\n203.0.113.7 - - [") || !strings.Contains(logs, "\n127.0.0.2 - - [") || strings.Contains(logs, "192.0.2.1") {
				t.Errorf("the access log's clients are not the app's:\n%s", logs)
			}

			s = startWSGI(t, args[0], append([]string{"--forwarded-headers", "forwarded"}, args[1:]...)...)
			if got := askProxyApp(t, trusted, s, forwarded...); got != (seen{"2001:db8::17", "4711", "https"}) {
				t.Errorf("Forwarded: app saw %+v", got)
			}
			if got := askProxyApp(t, trusted, s, chain...); got.Addr != "127.0.0.1" || got.Scheme != "http" {
				t.Errorf("X-Forwarded-* under forwarded: app saw %+v", got)
			}
			s.stop()
			if logs := s.logs.String(); !strings.Contains(logs, "\n2001:db8::17 - - [") {
				t.Errorf("the access log's clients are not the app's:\n%s", logs)
			}
		})
	}
}

// TestProxyHeadersOff: without --proxy-headers the fields reach the app as
// any other, even from the default trusted 127.0.0.1.
func TestProxyHeadersOff(t *testing.T) {
	s := startWSGI(t, "proxy_app:app")
	got := askProxyApp(t, clientFrom("127.0.0.1"), s, "X-Forwarded-For", "203.0.113.7", "X-Forwarded-Proto", "https")
	if got.Addr != "127.0.0.1" || got.Scheme != "http" {
		t.Errorf("app saw %+v", got)
	}
}

// TestProxyHeadersEnv: FORWARDED_ALLOW_IPS stands for
// --forwarded-allow-ips when neither it nor M0_FORWARDED_ALLOW_IPS is set,
// as in uvicorn and gunicorn; a mistake in it is a config error.
func TestProxyHeadersEnv(t *testing.T) {
	s := start(t, wsgiVariant("FORWARDED_ALLOW_IPS=127.0.0.2"), "--app-dir", appsDir(t), "--proxy-headers", "proxy_app:app")
	fields := []string{"X-Forwarded-For", "203.0.113.7"}
	if got := askProxyApp(t, clientFrom("127.0.0.2"), s, fields...); got.Addr != "203.0.113.7" {
		t.Errorf("from 127.0.0.2, listed: app saw %+v", got)
	}
	if got := askProxyApp(t, clientFrom("127.0.0.1"), s, fields...); got.Addr != "127.0.0.1" {
		t.Errorf("from 127.0.0.1, not listed: app saw %+v", got)
	}
	status, out := runToExit(t, append(cleanEnv(), "FORWARDED_ALLOW_IPS=10.0.0.0/40"),
		"--port", "0", "--app-dir", appsDir(t), "--proxy-headers", "proxy_app:app")
	if status != 2 || !strings.Contains(out, "--forwarded-allow-ips") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("bad FORWARDED_ALLOW_IPS: status %d, output:\n%s", status, out)
	}
}

// TestProxyHeadersNginx: behind Debian's nginx configured as its docs
// say (X-Forwarded-For from $proxy_add_x_forwarded_for, the proto from
// $scheme), what a client writes in Forwarded, passed through by nginx,
// or in X-Forwarded-For before its own address, never becomes the client.
func TestProxyHeadersNginx(t *testing.T) {
	requireCommand(t, "nginx")
	s := startWSGI(t, "--proxy-headers", "--access-log", "proxy_app:app")
	dir := t.TempDir()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := listener.Addr().String()
	listener.Close()
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events {}
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	server {
		listen %[2]s;
		location / {
			proxy_pass http://%[3]s;
			proxy_set_header Host $host;
			proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
			proxy_set_header X-Forwarded-Proto $scheme;
		}
	}
}
`, dir, front, s.addr)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nginx := exec.CommandContext(ctx, "nginx", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"))
	var nginxOut bytes.Buffer
	nginx.Stdout, nginx.Stderr = &nginxOut, &nginxOut
	if err := nginx.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = nginx.Process.Signal(syscall.SIGQUIT)
		_ = nginx.Wait()
	}()
	viaNginx := &server{addr: front, logs: s.logs}
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.DialTimeout("tcp", front, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			errorLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx does not listen on %s: %v\n%s%s", front, err, nginxOut.String(), errorLog)
		}
		time.Sleep(50 * time.Millisecond)
	}
	client := clientFrom("127.0.0.2")
	for _, forged := range [][]string{
		{"Forwarded", "for=1.2.3.4;proto=https"},
		{"Forwarded", `for="[2001:db8::1]";proto=https`, "X-Forwarded-Proto", "https"},
		{"X-Forwarded-For", "1.2.3.4"},
		{"X-Forwarded-For", "<script>"},
	} {
		if got := askProxyApp(t, client, viaNginx, forged...); got.Addr != "127.0.0.2" || got.Scheme != "http" {
			t.Errorf("%q through nginx: app saw %+v, want 127.0.0.2 over http", forged, got)
		}
	}
}
