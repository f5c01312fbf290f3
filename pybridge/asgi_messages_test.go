package pybridge

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// trailerRecorder is a recorder that keeps the trailers.
type trailerRecorder struct {
	recorder
	trailers []string
}

func (r *trailerRecorder) WriteTrailers(t *Response) error {
	for i := 0; i < t.HeaderLen(); i++ {
		n, v := t.Header(i)
		r.trailers = append(r.trailers, string(n)+": "+string(v))
	}
	return nil
}

// A request body arrives in pieces: one http.request per piece, more_body
// true until the last, and the app sees the bytes in order.
func TestASGIRequestBodyPieces(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		for _, c := range []struct {
			name   string
			head   string
			pieces []string
			want   string
			count  string
		}{
			{"length", "Content-Length: 11\r\n", []string{"hello", " ", "world"}, "hello world", "3"},
			{"chunked", "Transfer-Encoding: chunked\r\n", []string{"ab", "cd"}, "abcd", "3"},
			{"none", "", nil, "", "1"},
		} {
			t.Run(c.name, func(t *testing.T) {
				j := s.job(t, "POST /echo HTTP/1.1\r\nHost: x\r\n"+c.head+"\r\n")
				if c.pieces != nil {
					p := &pieces{}
					for _, s := range c.pieces {
						p.list = append(p.list, []byte(s))
					}
					j.Body = p
				}
				s.run(j)
				r := j.Response
				// With a Content-Length the last piece says more_body
				// False; chunked needs one more read to see the end.
				if n, _ := header(r, "x-pieces"); string(r.Body()) != c.want || n != c.count {
					t.Errorf("body %q in %s pieces, want %q in %s", r.Body(), n, c.want, c.count)
				}
			})
		}
	})
}

// A body larger than one read arrives in several receives, never whole.
func TestASGIRequestBodyLarge(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio})
	body := strings.Repeat("0123456789abcdef", 20000) // 320,000 bytes
	j := s.job(t, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 320000\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte(body)}}
	s.run(j)
	n, _ := header(j.Response, "x-pieces")
	if string(j.Response.Body()) != body || n != "5" {
		t.Errorf("%d bytes in %s pieces, want %d in 5 (64 KiB reads)", len(j.Response.Body()), n, len(body))
	}
}

func TestASGIBrokenBodyDisconnects(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio})
	j := s.job(t, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("abc")}, err: errGone}
	s.run(j)
	// The app asserted http.request and got http.disconnect: its error,
	// but the client's fault, so no 500 blamed on the app.
	if r := j.Response; r.Outcome() != Aborted || r.AppError() || j.BodyErr != errGone {
		t.Errorf("outcome %d app error %v body err %v", r.Outcome(), r.AppError(), j.BodyErr)
	}
}

// Without a writer a multi-message body is gathered whole; with one it
// streams piece by piece (empty pieces skipped) and ends Streamed.
func TestASGIStreamedBody(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		r := s.get(t, "/stream").Response
		if r.Outcome() != Complete || string(r.Body()) != "one;two;three" || r.ContentLength() != 13 {
			t.Errorf("buffered: outcome %d body %q length %d", r.Outcome(), r.Body(), r.ContentLength())
		}
		j := s.job(t, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
		w := &recorder{}
		j.Writer = w
		s.run(j)
		if j.Response.Outcome() != Streamed || w.heads != 1 || w.status != 200 ||
			strings.Join(w.chunks, "|") != "one;|two;|three" {
			t.Errorf("streamed: outcome %d heads %d status %d chunks %q",
				j.Response.Outcome(), w.heads, w.status, w.chunks)
		}
	})
}

// One body message over the buffer limit streams with its length known.
func TestASGIBigBodyStreamsWithLength(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio})
	j := s.job(t, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	w := &recorder{}
	j.Writer = w
	s.run(j)
	if r := j.Response; r.Outcome() != Streamed || r.ContentLength() != 200<<10 || len(w.chunks) != 1 || len(w.chunks[0]) != 200<<10 {
		t.Errorf("outcome %d length %d chunks %d", r.Outcome(), r.ContentLength(), len(w.chunks))
	}
	r := s.get(t, "/big").Response
	if r.Outcome() != Complete || len(r.Body()) != 200<<10 {
		t.Errorf("without a writer: outcome %d body %d bytes", r.Outcome(), len(r.Body()))
	}
}

func TestASGITrailers(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "GET /trailers HTTP/1.1\r\nHost: x\r\n\r\n")
		w := &trailerRecorder{}
		j.Writer = w
		s.run(j)
		if j.Response.Outcome() != Streamed || strings.Join(w.chunks, "") != "data" ||
			strings.Join(w.trailers, ", ") != "x-sum: 1, x-count: 2" {
			t.Errorf("outcome %d chunks %q trailers %q", j.Response.Outcome(), w.chunks, w.trailers)
		}
		// A Port that drops the trailers (as the loop does for a response
		// that is not chunked): the body still ends well.
		j = s.job(t, "GET /trailers HTTP/1.1\r\nHost: x\r\n\r\n")
		plain := &recorder{}
		j.Writer = plain
		s.run(j)
		if j.Response.Outcome() != Streamed || strings.Join(plain.chunks, "") != "data" {
			t.Errorf("trailers dropped: outcome %d chunks %q", j.Response.Outcome(), plain.chunks)
		}
	})
}

// http.disconnect comes once the response is done; a send after it
// raises.
func TestASGIDisconnectAfterResponse(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "POST /disconnect?disc-"+loop.String()+" HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n")
		j.Body = &pieces{list: [][]byte{[]byte("hi")}}
		s.run(j)
		if string(j.Response.Body()) != "ok" {
			t.Fatalf("body %q", j.Response.Body())
		}
		if got := string(s.get(t, "/seen?disc-"+loop.String()).Response.Body()); got != "http.disconnect" {
			t.Errorf("receive after the response gave %q", got)
		}
		s.get(t, "/after-done?after-"+loop.String())
		if got := string(s.get(t, "/seen?after-"+loop.String()).Response.Body()); got != "RuntimeError" {
			t.Errorf("send after the response: %q", got)
		}
	})
}

// A client gone while streaming: send raises, the response aborts, no
// traceback is blamed on the app.
func TestASGIClientGoneWhileStreaming(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio})
	j := s.job(t, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	j.Writer = &recorder{failAfter: 2}
	s.run(j)
	if r := j.Response; r.Outcome() != Aborted || r.AppError() {
		t.Errorf("outcome %d app error %v", r.Outcome(), r.AppError())
	}
}

func TestASGIAppErrors(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		for _, path := range []string{"/raise-before", "/no-response", "/head-only", "/body-first",
			"/bad-status", "/bad-header", "/str-header", "/double-start"} {
			r := s.get(t, path).Response
			if r.Outcome() != Complete || r.Status() != 500 || !r.AppError() || string(r.Body()) != "Internal Server Error\n" {
				t.Errorf("%s: outcome %d status %d app error %v body %q", path, r.Outcome(), r.Status(), r.AppError(), r.Body())
			}
		}
		// After the head went out: an abort, the app's error.
		j := s.job(t, "GET /raise-after HTTP/1.1\r\nHost: x\r\n\r\n")
		w := &recorder{}
		j.Writer = w
		s.run(j)
		if r := j.Response; r.Outcome() != Aborted || !r.AppError() || strings.Join(w.chunks, "") != "part" {
			t.Errorf("/raise-after: outcome %d app error %v chunks %q", r.Outcome(), r.AppError(), w.chunks)
		}
		// The executor serves on after all of them.
		if r := s.get(t, "/hello").Response; string(r.Body()) != "hello" {
			t.Errorf("after the errors: %q", r.Body())
		}
	})
}

func TestASGIPathsend(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio})
	r := s.get(t, "/pathsend").Response
	want, _ := os.ReadFile("testdata/file_body.txt")
	fd, off, n, ok := r.File()
	if !ok || r.Outcome() != Complete || off != 0 || n != int64(len(want)) || r.ContentLength() != n {
		t.Fatalf("file %v fd %d offset %d length %d outcome %d", ok, fd, off, n, r.Outcome())
	}
	got := make([]byte, n)
	if k, err := readAt(fd, got); err != nil || k != len(want) || string(got) != string(want) {
		t.Errorf("file content: %d %v", k, err)
	}
}

func TestASGILifespanShutdownOnStop(t *testing.T) {
	marker := filepath.Join(os.TempDir(), "m0-asgi-shutdown-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(marker)
	app := loadApp(t, "asgi_spec_app:app")
	q := NewQueue(8)
	ex, err := interp.StartASGI(app, ASGIOptions{Lifespan: LifespanOn}, q, waiting)
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	if err := ex.Stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "shutdown" {
		t.Errorf("lifespan.shutdown did not run: %q %v", b, err)
	}
}

func TestASGILifespanStartupFailure(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		for _, mode := range []Lifespan{LifespanAuto, LifespanOn} {
			app := loadApp(t, "asgi_spec_app:failing_startup")
			q := NewQueue(8)
			ex, err := interp.StartASGI(app, ASGIOptions{Loop: loop, Lifespan: mode}, q, waiting)
			skipWithoutUvloop(t, err)
			se, ok := err.(*StartupError)
			if ex != nil || !ok || se.Message != "the database is down" {
				t.Errorf("%s: executor %v error %v", mode, ex, err)
			}
		}
	})
}

// An app that raises on the lifespan scope: tolerated by auto, a
// failure with on, never asked with off.
func TestASGILifespanModes(t *testing.T) {
	app := loadApp(t, "asgi_spec_app:no_lifespan")
	for _, c := range []struct {
		mode Lifespan
		ok   bool
	}{{LifespanAuto, true}, {LifespanOn, false}, {LifespanOff, true}} {
		q := NewQueue(8)
		ex, err := interp.StartASGI(app, ASGIOptions{Loop: LoopAsyncio, Lifespan: c.mode}, q, waiting)
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v", c.mode, err)
		}
		if err != nil {
			continue
		}
		s := &asgiServer{ex: ex, queue: q, app: app}
		if r := s.get(t, "/x").Response; string(r.Body()) != "served without lifespan" {
			t.Errorf("%s: %q", c.mode, r.Body())
		}
		q.Close()
		if err := ex.Stop(); err != nil {
			t.Error(err)
		}
	}
}

func TestASGI2App(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:ASGI2", ASGIOptions{Loop: LoopAsyncio})
	if r := s.get(t, "/two").Response; r.Status() != 200 || string(r.Body()) != "asgi2 /two" {
		t.Errorf("%d %q", r.Status(), r.Body())
	}
}

// gatedReader holds its pieces until open: a TryRead before then is
// pending.
type gatedReader struct {
	pieces
	gate chan struct{}
}

func (g *gatedReader) TryRead(p []byte) (int, bool, error) {
	select {
	case <-g.gate:
		return g.pieces.TryRead(p)
	default:
		return 0, true, nil
	}
}

// open lets the pieces in and tells the executor.
func (g *gatedReader) open(ex *ASGIExecutor, j *Job) {
	close(g.gate)
	ex.Readable(j)
}

// A receive cancelled while its read is out loses nothing: the piece
// goes to the next receive.
func TestASGICancelledReceiveKeepsThePiece(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "POST /cancel-receive?cancel-"+loop.String()+" HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n")
		g := &gatedReader{pieces: pieces{list: [][]byte{[]byte("abc"), []byte("def")}}, gate: make(chan struct{})}
		j.Body = g
		done := waiting.add(j)
		s.queue.Push(j)
		if got := string(s.get(t, "/seen?cancel-"+loop.String()).Response.Body()); got != "cancelled" {
			t.Fatalf("seen %q", got)
		}
		g.open(s.ex, j)
		<-done
		if r := j.Response; r.Status() != 200 || string(r.Body()) != "abcdef" {
			t.Errorf("%d %q", r.Status(), r.Body())
		}
	})
}

// A receive still waiting for a body piece when its request's task ends
// (a task of the app's own) gets http.disconnect then, not the piece of
// a request that is over, and does not wait for ever.
func TestASGIReceivePastTheTask(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "POST /receive-past-the-task?past-"+loop.String()+" HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n")
		g := &gatedReader{pieces: pieces{list: [][]byte{[]byte("abc")}}, gate: make(chan struct{})}
		j.Body = g
		done := waiting.add(j)
		s.queue.Push(j)
		got := string(s.get(t, "/seen?past-"+loop.String()).Response.Body())
		// The task has ended and the response is final, but the job goes
		// back only once no op of it is out (asgi_conn.c's settle): a
		// later Readable must not find the job handed over again.
		select {
		case <-done:
			t.Fatal("the job went back with its read still out")
		default:
		}
		g.open(s.ex, j) // the read still out ends; then the job completes
		<-done
		if got != "http.disconnect" {
			t.Errorf("the waiting receive got %q", got)
		}
		if r := j.Response; r.Status() != 200 || string(r.Body()) != "answered" {
			t.Errorf("%d %q", r.Status(), r.Body())
		}
	})
}

// Two receives at once get consecutive pieces, not the same one twice.
func TestASGIConcurrentReceives(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "POST /two-receives HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n")
		j.Body = &pieces{list: [][]byte{[]byte("abc"), []byte("def"), []byte("ghi")}}
		s.run(j)
		if r := j.Response; r.Status() != 200 || string(r.Body()) != "abcdefghi" {
			t.Errorf("%d %q", r.Status(), r.Body())
		}
	})
}

// Stop while a body read waits on the client: the executor's last wake
// fails the read (abandonWaits), so the job, held back by it, completes
// (503) before Stop returns, whatever the client does later.
func TestASGIStopWithReadOut(t *testing.T) {
	app := loadApp(t, "asgi_spec_app:app")
	q := NewQueue(8)
	ex, err := interp.StartASGI(app, ASGIOptions{Loop: LoopAsyncio}, q, waiting)
	if err != nil {
		t.Fatal(err)
	}
	j := newJob(t, app, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n")
	g := &gatedReader{pieces: pieces{list: [][]byte{[]byte("abc")}}, gate: make(chan struct{})}
	j.Body = g
	done := waiting.add(j)
	q.Push(j)
	probe := &asgiServer{ex: ex, queue: q, app: app}
	probe.get(t, "/hello") // /echo's read is out by now
	q.Close()
	if err := ex.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	default:
		t.Fatal("Stop returned with the job still held by its waiting read")
	}
	if r := j.Response; r.Outcome() != Complete || r.Status() != 503 {
		t.Errorf("outcome %d status %d", r.Outcome(), r.Status())
	}
	g.open(ex, j) // news after the end: nothing is left to resume
}
