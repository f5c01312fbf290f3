package pybridge

import (
	"io"
	"sync"
	"testing"
	"time"
)

// arrivingBody is a TryReader whose pieces arrive on the test's word: a
// TryRead with nothing arrived comes back pending, and the test then
// lets the next piece (or the end, or err) arrive and calls Readable.
type arrivingBody struct {
	mu       sync.Mutex
	arrived  [][]byte
	ended    bool
	err      error
	pending  chan struct{} // a TryRead came back pending
	blocking int           // Read calls: there must be none
}

func (b *arrivingBody) Read([]byte) (int, error) {
	b.mu.Lock()
	b.blocking++
	b.mu.Unlock()
	return 0, io.ErrUnexpectedEOF
}

func (b *arrivingBody) TryRead(p []byte) (int, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.arrived) > 0 {
		n := copy(p, b.arrived[0])
		if b.arrived[0] = b.arrived[0][n:]; len(b.arrived[0]) == 0 {
			b.arrived = b.arrived[1:]
		}
		return n, false, nil
	}
	if b.err != nil {
		return 0, false, b.err
	}
	if b.ended {
		return 0, false, io.EOF
	}
	b.pending <- struct{}{}
	return 0, true, nil
}

// arrive lets a piece in (nil: the end), then says so to the executor.
func (b *arrivingBody) arrive(ex *ASGIExecutor, j *Job, piece []byte, err error) {
	b.mu.Lock()
	switch {
	case err != nil:
		b.err = err
	case piece == nil:
		b.ended = true
	default:
		b.arrived = append(b.arrived, piece)
	}
	b.mu.Unlock()
	ex.Readable(j)
}

// A TryReader's body is read with no goroutine and no blocking Read: a
// receive that finds nothing waits for Readable, and the app sees every
// piece in order, then the end; a body that fails mid-way gives the app
// http.disconnect and the job the reader's error.
func TestASGITryReadWaitsForReadable(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		for _, c := range []struct {
			name string
			err  error
		}{{"whole", nil}, {"broken", errGone}} {
			t.Run(c.name, func(t *testing.T) {
				j := s.job(t, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
				b := &arrivingBody{pending: make(chan struct{}, 1)}
				j.Body = b
				done := waiting.add(j)
				s.queue.Push(j)
				for i, piece := range []string{"hello", " ", "world", ""} {
					select {
					case <-b.pending:
					case <-time.After(20 * time.Second):
						t.Fatalf("no pending read before piece %d", i)
					}
					switch {
					case piece != "":
						b.arrive(s.ex, j, []byte(piece), nil)
					case c.err != nil:
						b.arrive(s.ex, j, nil, c.err)
					default:
						b.arrive(s.ex, j, nil, nil)
					}
				}
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("the job never completed")
				}
				r := j.Response
				if b.blocking != 0 {
					t.Fatalf("%d blocking Reads", b.blocking)
				}
				if c.err != nil {
					if r.Outcome() != Aborted || r.AppError() || j.BodyErr != errGone {
						t.Fatalf("outcome %d app error %v body err %v", r.Outcome(), r.AppError(), j.BodyErr)
					}
					return
				}
				if n, _ := header(r, "x-pieces"); string(r.Body()) != "hello world" || n != "4" {
					t.Fatalf("body %q in %s pieces", r.Body(), n)
				}
			})
		}
	})
}

// blockingOnly is a Body and Writer with only the blocking methods: the
// executor must refuse them rather than call them (no path from Python
// blocks), failing the receive or send instead.
type blockingOnly struct{ calls int }

func (b *blockingOnly) Read([]byte) (int, error)    { b.calls++; return 0, io.EOF }
func (b *blockingOnly) WriteHead(*Response) error   { b.calls++; return nil }
func (b *blockingOnly) Write(p []byte) (int, error) { b.calls++; return len(p), nil }

// A Body that is not a TryReader, or a Writer that is not a PostWriter,
// is never called: the app's receive gets http.disconnect (the job's
// BodyErr says why), its streamed send raises, and the job ends without
// blaming the app's code for the server's mistake.
func TestASGIRefusesBlockingBodyAndWriter(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		body := &blockingOnly{}
		j := s.job(t, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n")
		j.Body = body
		s.run(j)
		if body.calls != 0 || j.BodyErr != errNotTryReader || j.Response.Outcome() != Aborted {
			t.Fatalf("body: %d blocking calls, body err %v, outcome %d", body.calls, j.BodyErr, j.Response.Outcome())
		}
		writer := &blockingOnly{}
		j = s.job(t, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
		j.Writer = writer
		s.run(j)
		if writer.calls != 0 || j.Response.Outcome() != Aborted {
			t.Fatalf("writer: %d blocking calls, outcome %d", writer.calls, j.Response.Outcome())
		}
	})
}
