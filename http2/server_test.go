package http2

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"sync"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// testServer serves a Conn per accepted connection over net.Conn, the way
// the loop will: read, Feed, then answer what the read dispatched, then
// send the output. It lets real clients (h2spec, x/net's Transport) test
// the codec before any loop drives it.
type testServer struct {
	t        *testing.T
	listener net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, listener: l}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		l.Close()
		s.mu.Lock()
		for _, nc := range s.conns {
			nc.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *testServer) addr() string { return s.listener.Addr().String() }

func (s *testServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.listener.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, nc)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			serveTestConn(nc)
		}()
	}
}

// testApp answers GET /size/N with N bytes, and any other request, once
// its body is in, with the body's SHA-256 in hex.
type testApp struct {
	conn    *Conn
	pending []*Stream
	bodies  map[*Stream]*bytes.Buffer
	rest    map[*Stream][]byte
}

func (a *testApp) Request(s *Stream) {
	a.bodies[s] = new(bytes.Buffer)
	if s.RemoteClosed() {
		a.pending = append(a.pending, s)
	}
}

func (a *testApp) Data(s *Stream, p []byte, end bool) {
	a.bodies[s].Write(p)
	a.conn.Consumed(s, len(p))
	if end {
		a.pending = append(a.pending, s)
	}
}

func (a *testApp) Reset(s *Stream, code ErrCode) {
	delete(a.rest, s)
	delete(a.bodies, s)
	for i, p := range a.pending {
		if p == s {
			a.pending = append(a.pending[:i], a.pending[i+1:]...)
			break
		}
	}
	a.conn.Done(s)
}

func (a *testApp) Malformed(uint32, string) {}

func (a *testApp) WindowOpened(s *Stream) {
	rest, ok := a.rest[s]
	if !ok {
		return
	}
	n := a.conn.WriteData(s, rest, true)
	if n < len(rest) {
		a.rest[s] = rest[n:]
		return
	}
	delete(a.rest, s)
	delete(a.bodies, s)
	a.conn.Done(s)
}

// answer responds to the requests whose bodies ended in the last read.
func (a *testApp) answer() {
	for _, s := range a.pending {
		var body []byte
		var size int
		if n, _ := fmtSscan(s.Request.Path, &size); n == 1 {
			body = bytes.Repeat([]byte("x"), size)
		} else {
			sum := sha256.Sum256(a.bodies[s].Bytes())
			body = []byte(hex.EncodeToString(sum[:]))
		}
		a.conn.WriteHeaders(s, 200, []hpack.HeaderField{{Name: "Content-Type", Value: "text/plain"}}, s.Request.Method == "HEAD")
		if s.Request.Method == "HEAD" {
			a.conn.Done(s)
			continue
		}
		a.rest[s] = body
		a.WindowOpened(s)
	}
	a.pending = a.pending[:0]
}

func serveTestConn(nc net.Conn) {
	defer nc.Close()
	app := &testApp{bodies: map[*Stream]*bytes.Buffer{}, rest: map[*Stream][]byte{}}
	c := NewConn(Config{}, app)
	app.conn = c
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 32<<10)
	for {
		if out := c.Output(); len(out) > 0 {
			if _, err := nc.Write(out); err != nil {
				return
			}
			c.Sent(len(out))
		}
		if c.Err() != nil {
			return
		}
		n, err := nc.Read(chunk)
		if err != nil {
			c.Close()
			return
		}
		buf = append(buf, chunk[:n]...)
		used, _ := c.Feed(buf)
		buf = buf[:copy(buf, buf[used:])]
		app.answer()
	}
}

// fmtSscan reads N from "/size/N".
func fmtSscan(path string, size *int) (int, error) {
	const prefix = "/size/"
	if len(path) <= len(prefix) || path[:len(prefix)] != prefix {
		return 0, io.EOF
	}
	n := 0
	for _, c := range path[len(prefix):] {
		if c < '0' || c > '9' {
			return 0, io.EOF
		}
		n = n*10 + int(c-'0')
	}
	*size = n
	return 1, nil
}
