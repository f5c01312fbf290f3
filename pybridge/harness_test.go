package pybridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/m0serve/m0serve/http1"
)

// One interpreter for the test binary: CPython is started once per
// process. Two handler threads serve every test's jobs.
var (
	interp   *Interpreter
	queue    *Queue
	handlers *Handlers
	waiting  = &waiters{done: map[*Job]chan struct{}{}}
	apps     = map[string]*App{}
	appsMu   sync.Mutex
)

func TestMain(m *testing.M) {
	var err error
	interp, err = Start(Config{AppDir: "testdata", SitePackages: []string{"testdata/site"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	queue = NewQueue(64)
	handlers, err = interp.StartHandlers(2, 16, queue, waiting)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	queue.Close()
	handlers.Wait()
	if err := interp.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// waiters is the tests' Completer: it closes each job's channel.
type waiters struct {
	mu   sync.Mutex
	done map[*Job]chan struct{}
}

func (w *waiters) Complete(j *Job) {
	w.mu.Lock()
	ch := w.done[j]
	delete(w.done, j)
	w.mu.Unlock()
	close(ch)
}

func (w *waiters) add(j *Job) chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	w.done[j] = ch
	w.mu.Unlock()
	return ch
}

// loadApp loads an app once per test binary.
func loadApp(t testing.TB, target string) *App {
	t.Helper()
	appsMu.Lock()
	defer appsMu.Unlock()
	if a, ok := apps[target]; ok {
		return a
	}
	a, err := interp.LoadApp(AppSpec{Target: target, ServerName: "test.local", ServerPort: 8080, MultiThread: true})
	if err != nil {
		t.Fatal(err)
	}
	apps[target] = a
	return a
}

// newJob parses a raw request head into a job for app.
func newJob(t testing.TB, app *App, raw string) *Job {
	t.Helper()
	var p http1.Parser
	var req http1.Request
	head := []byte(raw)
	if _, err := p.Parse(head, &req); err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	j := &Job{App: app, Response: NewResponse()}
	j.Request.FromHTTP1(&req, head)
	j.Request.RemoteAddr = []byte("127.0.0.1")
	j.Request.RemotePort = 54321
	t.Cleanup(func() {
		if j.Response != nil {
			j.Response.Free()
		}
	})
	return j
}

// run hands the job to the handler threads and waits for its completion.
func run(j *Job) {
	ch := waiting.add(j)
	queue.Push(j)
	<-ch
}

// get serves a GET of path on app with a buffered response.
func get(t testing.TB, target, path string) *Job {
	t.Helper()
	j := newJob(t, loadApp(t, target), "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
	run(j)
	return j
}

// pieces is a BodyReader that hands out its pieces one Read at a time.
type pieces struct {
	list [][]byte
	err  error // returned after the pieces instead of io.EOF, when set
}

// TryRead makes pieces an ASGI job's TryReader: every piece is in.
func (p *pieces) TryRead(b []byte) (int, bool, error) {
	n, err := p.Read(b)
	return n, false, err
}

func (p *pieces) Read(b []byte) (int, error) {
	for len(p.list) > 0 && len(p.list[0]) == 0 {
		p.list = p.list[1:]
	}
	if len(p.list) == 0 {
		if p.err != nil {
			return 0, p.err
		}
		return 0, io.EOF
	}
	n := copy(b, p.list[0])
	p.list[0] = p.list[0][n:]
	return n, nil
}

// recorder is a BodyWriter that keeps what it was sent; failAfter > 0
// makes the Write of that number fail, as a client gone would.
type recorder struct {
	status    int
	headers   int
	heads     int
	chunks    []string
	failAfter int
}

var errGone = errors.New("client gone")

func (r *recorder) WriteHead(resp *Response) error {
	r.heads++
	r.status = resp.Status()
	r.headers = resp.HeaderLen()
	return nil
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.failAfter > 0 && len(r.chunks)+1 >= r.failAfter {
		return 0, errGone
	}
	r.chunks = append(r.chunks, string(p))
	return len(p), nil
}

// Post, WriteTrailers, AcceptWebSocket and ClientGoneAtStart make a
// recorder an ASGI job's Port: never full, trailers and WebSockets
// refused, the client there.
func (r *recorder) Post(p []byte) (bool, error) {
	_, err := r.Write(p)
	return false, err
}

func (r *recorder) WriteTrailers(*Response) error { return nil }

func (r *recorder) AcceptWebSocket([]byte, *Response, WebSocketEvents) (WebSocketConn, error) {
	return nil, errNoWebSocket
}

func (r *recorder) ClientGoneAtStart() (closed, inputEnded bool) { return false, false }

var errNoWebSocket = errors.New("the test's writer takes no WebSocket")

// header returns the first response field named name.
func header(r *Response, name string) (string, bool) {
	for i := 0; i < r.HeaderLen(); i++ {
		n, v := r.Header(i)
		if string(n) == name {
			return string(v), true
		}
	}
	return "", false
}

var errEOF = io.EOF
