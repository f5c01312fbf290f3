//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestTimeouts: header-read (slowloris) and keep-alive idle deadlines, on
// the full variants. The deadlines are short so the cases stay quick;
// what is asserted is the behaviour (408 then close, silent close, a
// normal client still served), never how fast.
func TestTimeouts(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "hello", "--header-timeout", "2s", "--keepalive-timeout", "1s")
		t.Run("slowloris is cut off", func(t *testing.T) {
			c := dial(t, s)
			head := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("s", 60) + "\r\n\r\n"
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				for i := 0; i < len(head); i++ {
					if _, err := c.Write([]byte{head[i]}); err != nil {
						return
					}
					time.Sleep(time.Second)
				}
			}()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no 408 before the close: %v", err)
			}
			if resp.StatusCode != 408 || !resp.Close {
				t.Fatalf("status %d (close %v), want 408 and close", resp.StatusCode, resp.Close)
			}
			c.Close()
			<-stopped
		})
		t.Run("1000 slowloris connections do not stop a normal client", func(t *testing.T) {
			var conns []net.Conn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for i := 0; i < 1000; i++ {
				c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
				if err != nil {
					t.Fatalf("connection %d: %v", i, err)
				}
				conns = append(conns, c)
				io.WriteString(c, "GET / HTTP/1.1\r\nHo")
			}
			client := &http.Client{Timeout: 10 * time.Second}
			for i := 0; i < 20; i++ {
				resp, err := client.Get(s.url("/"))
				if err != nil {
					t.Fatalf("normal request %d among slowloris connections: %v", i, err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("normal request %d: %d", i, resp.StatusCode)
				}
			}
			// Every slowloris connection is answered 408 and closed.
			for i, c := range conns {
				c.SetReadDeadline(time.Now().Add(20 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil || resp.StatusCode != 408 {
					t.Fatalf("slowloris connection %d: %v %v", i, resp, err)
				}
			}
		})
		t.Run("idle keep-alive closes silently", func(t *testing.T) {
			c := dial(t, s)
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			r := bufio.NewReader(c)
			if resp := readResponse(t, r, nil); resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if b, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("idle connection: read %q, %v; want EOF", b, err)
			}
		})
	})
}

// TestManyConnections: 1000 concurrent connections, each served.
func TestManyConnections(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "hello")
		const n = 1000
		conns := make([]net.Conn, n)
		for i := range conns {
			c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			conns[i] = c
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := bufio.NewReader(c)
				for k := 0; k < 3; k++ {
					fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						errs <- fmt.Errorf("connection %d request %d: %v", i, k, err)
						return
					}
					body, _ := io.ReadAll(resp.Body)
					if string(body) != "Hello, World!" {
						errs <- fmt.Errorf("connection %d: body %q", i, body)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})
}

// TestMaxConnections: at the limit the server stops accepting but drops
// nothing: a connection beyond it is served once another closes.
func TestMaxConnections(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "hello", "--max-connections", "2")
		a, b := dial(t, s), dial(t, s)
		for _, c := range []net.Conn{a, b} {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			readResponse(t, bufio.NewReader(c), nil)
		}
		third := dial(t, s) // completes in the kernel's backlog
		io.WriteString(third, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		// Not served while two are open. (A wrong server slower than this
		// wait passes unnoticed; a right one never fails here.)
		third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if n, err := third.Read(make([]byte, 1)); err == nil {
			t.Fatalf("served %d bytes beyond --max-connections", n)
		}
		third.SetReadDeadline(time.Now().Add(20 * time.Second))
		a.Close()
		if resp := readResponse(t, bufio.NewReader(third), nil); resp.StatusCode != 200 {
			t.Fatalf("third connection: %d", resp.StatusCode)
		}
	})
}

// TestGracefulShutdown: SIGTERM with requests in flight: each gets its
// whole response, idle connections close, and the process exits 0.
func TestGracefulShutdown(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "slow")
		idle := dial(t, s)
		const inFlight = 5
		readers := make([]*bufio.Reader, inFlight)
		conns := make([]net.Conn, inFlight)
		for i := range conns {
			conns[i] = dial(t, s)
			io.WriteString(conns[i], "GET /slow?ms=500&chunks=5 HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		// The slow handler writes its head before sleeping: once every
		// head is here, every request is in flight.
		resps := make([]*http.Response, inFlight)
		for i, c := range conns {
			readers[i] = bufio.NewReader(c)
			resp, err := http.ReadResponse(readers[i], nil)
			if err != nil {
				t.Fatal(err)
			}
			resps[i] = resp
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for i, resp := range resps {
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("in-flight request %d: %v", i, err)
			}
			if want := "chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n"; string(body) != want {
				t.Fatalf("in-flight request %d: body %q", i, body)
			}
		}
		if _, err := idle.Read(make([]byte, 1)); err == nil {
			t.Error("idle connection got bytes, want a close")
		}
		if err := s.waitExit(20 * time.Second); err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, s.logs)
		}
	})
}

// TestSecondSignalStopsNow: a second SIGTERM during the drain closes the
// connections still busy and exits at once (status 143, 128+SIGTERM)
// without waiting out the grace.
func TestSecondSignalStopsNow(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "slow", "--graceful-timeout", "5m")
		c := dial(t, s)
		io.WriteString(c, "GET /slow?ms=600000 HTTP/1.1\r\nHost: x\r\n\r\n")
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(s.logs.String(), "draining"); {
			if time.Now().After(deadline) {
				t.Fatalf("no drain logged after SIGTERM:\n%s", s.logs)
			}
			time.Sleep(10 * time.Millisecond)
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Error("the unfinished response ended cleanly; want it cut off")
		}
		err = s.waitExit(20 * time.Second)
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 143 {
			t.Fatalf("exit after the second SIGTERM: %v, want status 143\n%s", err, s.logs)
		}
	})
}
