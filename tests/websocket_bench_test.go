//go:build linux

package tests

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// The server's CPU per message of --native ws-echo beside its CPU per
// request of --native hello, 16 connections in ping-pong each:
//
//	go test -ldflags=-checklinkname=0 -run '^$' -bench ServerCPU ./tests/
//
// The figure is the server's utime+stime over the run (every thread, from
// /proc/<pid>/stat) divided by the messages or requests; the clients run
// in this process and are not counted.

const benchConnections = 16

func BenchmarkServerCPUWebSocketEcho(b *testing.B) {
	for _, v := range variants[:2] {
		b.Run(v.name, func(b *testing.B) {
			benchWebSocketEcho(b, start(b, v, "--native", "ws-echo"), "/")
		})
	}
}

// BenchmarkServerCPUASGIWebSocketEcho is the same ping-pong through an
// ASGI app's receive and send (tests/apps/asgi_websocket_app.py's /mirror).
func BenchmarkServerCPUASGIWebSocketEcho(b *testing.B) {
	for _, v := range variants[:2] {
		b.Run(v.name, func(b *testing.B) {
			s := start(b, v, withVenv(b, "--app-dir", appsDir(b), "asgi_websocket_app:app")...)
			benchWebSocketEcho(b, s, "/mirror")
		})
	}
}

// BenchmarkServerCPUUvicornWebSocketEcho is the same app under tests/.venv's
// uvicorn, with each of its WebSocket implementations.
func BenchmarkServerCPUUvicornWebSocketEcho(b *testing.B) {
	for _, impl := range []string{"websockets", "wsproto"} {
		b.Run(impl, func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			cmd := exec.Command(venvPython(b), "-m", "uvicorn", "--app-dir", appsDir(b),
				"--port", strconv.Itoa(port), "--ws", impl, "--log-level", "warning", "asgi_websocket_app:app")
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			addr := "127.0.0.1:" + strconv.Itoa(port)
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if c, err := net.Dial("tcp", addr); err == nil {
					c.Close()
					break
				}
				if time.Now().After(deadline) {
					b.Fatal("uvicorn did not start")
				}
			}
			benchWebSocketEcho(b, &server{cmd: cmd, addr: addr}, "/mirror")
		})
	}
}

func benchWebSocketEcho(b *testing.B, s *server, path string) {
	conns := make([]*websocket.Conn, benchConnections)
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial("ws://"+s.addr+path, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	message := []byte(strings.Repeat("m", 64))
	measureServerCPU(b, s, func(c int, n int) error {
		for range n {
			if err := conns[c].WriteMessage(websocket.TextMessage, message); err != nil {
				return err
			}
			if _, _, err := conns[c].ReadMessage(); err != nil {
				return err
			}
		}
		return nil
	}, "message")
}

func BenchmarkServerCPUHello(b *testing.B) {
	for _, v := range variants[:2] {
		b.Run(v.name, func(b *testing.B) {
			s := start(b, v, "--native", "hello")
			type client struct {
				conn net.Conn
				br   *bufio.Reader
			}
			clients := make([]client, benchConnections)
			for i := range clients {
				c, err := net.Dial("tcp", s.addr)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				clients[i] = client{c, bufio.NewReader(c)}
			}
			request := []byte("GET / HTTP/1.1\r\nHost: bench\r\n\r\n")
			measureServerCPU(b, s, func(c int, n int) error {
				cl := clients[c]
				for range n {
					if _, err := cl.conn.Write(request); err != nil {
						return err
					}
					resp, err := http.ReadResponse(cl.br, nil)
					if err != nil {
						return err
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				return nil
			}, "request")
		})
	}
}

// measureServerCPU runs b.N exchanges spread over the connections and
// reports the server's CPU µs per exchange.
func measureServerCPU(b *testing.B, s *server, run func(conn, n int) error, unit string) {
	pid := s.cmd.Process.Pid
	b.ResetTimer()
	before := processCPUTicks(b, pid)
	var wg sync.WaitGroup
	errs := make(chan error, benchConnections)
	for c := range benchConnections {
		n := b.N / benchConnections
		if c < b.N%benchConnections {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(c, n); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	after := processCPUTicks(b, pid)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	// Clock ticks are 10 ms (CLK_TCK 100 on Linux).
	b.ReportMetric(float64(after-before)*10000/float64(b.N), "server-µs/"+unit)
}

// processCPUTicks is a process's utime+stime in clock ticks, all threads.
func processCPUTicks(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}
