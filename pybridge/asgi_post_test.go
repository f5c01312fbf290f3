package pybridge

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// postingWriter is a PostWriter that reports every piece full: each send
// must wait for the test's Written before the next piece comes.
type postingWriter struct {
	recorder
	mu          sync.Mutex
	outstanding bool // a full piece not yet Written
	overlapped  int  // pieces posted while one was outstanding
	pieces      chan string
}

func (p *postingWriter) Post(b []byte) (bool, error) {
	p.mu.Lock()
	if p.outstanding {
		p.overlapped++
	}
	p.outstanding = true
	p.mu.Unlock()
	p.pieces <- string(b)
	return true, nil
}

// pushPosting queues path of asgi_concurrent_send_app to a fresh
// executor with a postingWriter: the job, its writer, and a channel
// closed when it completes.
func pushPosting(t *testing.T, loop Loop, path string) (*asgiServer, *Job, *postingWriter, chan struct{}) {
	s := startASGI(t, "asgi_concurrent_send_app:app", ASGIOptions{Loop: loop})
	j := s.job(t, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
	w := &postingWriter{pieces: make(chan string, 64)}
	j.Writer = w
	done := waiting.add(j)
	s.queue.Push(j)
	return s, j, w, done
}

// written clears the outstanding piece, then tells the executor.
func (p *postingWriter) written(ex *ASGIExecutor, j *Job) {
	p.mu.Lock()
	p.outstanding = false
	p.mu.Unlock()
	ex.Written(j)
}

// A streamed body to a PostWriter goes without a goroutine: each piece is
// posted, and a piece that fills the writer holds its send until Written,
// so no two are outstanding; every piece arrives, in each task's order,
// and the response ends Streamed.
func TestASGIPostedPiecesWaitForWritten(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s, j, w, done := pushPosting(t, loop, "/stream")
		var got []string
		for len(got) < 2*8+1 {
			select {
			case p := <-w.pieces:
				got = append(got, p)
				w.written(s.ex, j)
			case <-time.After(20 * time.Second):
				t.Fatalf("%d pieces: %q", len(got), got)
			}
		}
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the job never completed")
		}
		if j.Response.Outcome() != Streamed || w.heads != 1 || len(w.chunks) != 0 {
			t.Fatalf("outcome %d, heads %d, pieces written on a goroutine %q", j.Response.Outcome(), w.heads, w.chunks)
		}
		if w.overlapped != 0 {
			t.Fatalf("%d pieces posted while one waited for Written", w.overlapped)
		}
		if got[len(got)-1] != "end" {
			t.Fatalf("last piece %q", got[len(got)-1])
		}
		var pieces []string
		for _, c := range got[:len(got)-1] {
			pieces = append(pieces, c[:1]+" "+strings.TrimSuffix(c[1:], "."))
		}
		inTaskOrder(t, pieces, []string{"a", "b"}, 8)
	})
}

// Stop while a send waits for Written: the executor's last wake fails
// the send (abandonWaits), so the job, held back by it, completes
// (Aborted: its head went out) before Stop returns.
func TestASGIStopWithPostedPieceOut(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s, j, w, done := pushPosting(t, loop, "/stream")
		<-w.pieces // posted full: its send waits for a Written never given
		s.stop()
		select {
		case <-done:
		default:
			t.Fatal("Stop returned with the job still held by its waiting send")
		}
		if o := j.Response.Outcome(); o != Aborted {
			t.Errorf("outcome %d, want Aborted", o)
		}
	})
}

// A receive whose piece has arrived and a send the Port takes with room
// are over inside the call (asgi_conn.c's start_write, asgiSlot.read):
// the app's task runs on without a turn of the event loop, as it would
// over a transport. Before, each took a turn (the result was an event
// delivered at the next wake): "turns 1".
func TestASGIOpsDoneWithoutATurn(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "POST /no-turn HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n")
		j.Body = &pieces{list: [][]byte{[]byte("abc")}}
		rec := &recorder{}
		j.Writer = rec
		s.run(j)
		if got := strings.Join(rec.chunks, ""); j.Response.Outcome() != Streamed || got != "abc turns 0" {
			t.Fatalf("outcome %d, body %q", j.Response.Outcome(), got)
		}
	})
}

// postingSocket is a WebSocketConn that reports every message full:
// each send waits for the written call the test makes.
type postingSocket struct {
	countingSocket
	written     func(closed bool)
	outstanding bool
	overlapped  int
	messages    chan string
}

func (p *postingSocket) AcceptWebSocket(protocol []byte, headers *Response, events WebSocketEvents) (WebSocketConn, error) {
	p.events = events
	return socketConn{p}, nil
}

func (p *postingSocket) setWritten(f func(closed bool)) { p.written = f }

func (p *postingSocket) postMessage(binary bool, payload []byte) (bool, error) {
	p.mu.Lock()
	if p.outstanding {
		p.overlapped++
	}
	p.outstanding = true
	p.sends++
	p.mu.Unlock()
	p.messages <- string(payload)
	return true, nil
}

// WebSocket messages to a WebSocketConn go without a goroutine: each
// send waits for the poster's written call, no two are outstanding, every
// message arrives in each task's order, and the close goes out after
// them.
func TestASGIPostedMessagesWaitForWritten(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_concurrent_send_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n")
		j.Request.WebSocket = true
		p := &postingSocket{messages: make(chan string, 64)}
		p.sent = make(chan string, 64)
		j.Writer = p
		s.run(j)
		if j.Response.Outcome() != Upgraded || p.written == nil {
			t.Fatalf("outcome %d, SetWritten called %v", j.Response.Outcome(), p.written != nil)
		}
		p.events.Message(false, []byte("m"))
		var pieces []string
		for len(pieces) < 4*8 {
			select {
			case m := <-p.messages:
				pieces = append(pieces, strings.TrimPrefix(m, "m "))
				p.mu.Lock()
				p.outstanding = false
				p.mu.Unlock()
				p.written(false)
			case <-time.After(20 * time.Second):
				t.Fatalf("%d messages: %q", len(pieces), pieces)
			}
		}
		inTaskOrder(t, pieces, []string{"0", "1", "2", "3"}, 8)
		deadline := time.Now().Add(20 * time.Second)
		for {
			p.mu.Lock()
			closes, before, overlapped := p.closes, p.sendsAtClose, p.overlapped
			p.mu.Unlock()
			if overlapped != 0 {
				t.Fatalf("%d messages posted while one waited", overlapped)
			}
			if closes == 1 {
				if before != 4*8 {
					t.Fatalf("closed after %d of %d messages", before, 4*8)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("closes %d", closes)
			}
			time.Sleep(10 * time.Millisecond)
		}
		p.events.Closed(4001, nil)
	})
}

// stepWriter is a Port that notes, for each piece, how many Steps of
// its driver had returned when the piece was posted.
type stepWriter struct {
	recorder
	driver *driver
	steps  []int64
}

func (w *stepWriter) Post(p []byte) (bool, error) {
	w.steps = append(w.steps, w.driver.steps.Load())
	return w.recorder.Post(p)
}

// Driven, every piece of a streamed response is posted in one Step, so
// they leave the loop in one send, not one per pass: a send posted with
// room is over at once (/stream), and a task that yields to the loop
// between pieces gets another round of the same Step (/stream-yielding).
func TestASGIDrivenPiecesMeetInOneStep(t *testing.T) {
	for _, path := range []string{"/stream", "/stream-yielding"} {
		t.Run(path[1:], func(t *testing.T) {
			app := loadApp(t, "asgi_spec_app:app")
			q := NewQueue(8)
			ex, err := interp.StartASGI(app, ASGIOptions{Loop: LoopAsyncio, Driven: true}, q, waiting)
			if err != nil {
				t.Fatal(err)
			}
			d := drive(ex)
			s := &asgiServer{ex: ex, queue: q, app: app}
			defer func() {
				q.Close()
				d.end()
				if err := ex.Stop(); err != nil {
					t.Error(err)
				}
			}()
			j := s.job(t, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
			w := &stepWriter{driver: d}
			j.Writer = w
			s.run(j)
			if j.Response.Outcome() != Streamed || strings.Join(w.chunks, "|") != "one;|two;|three" {
				t.Fatalf("outcome %d pieces %q", j.Response.Outcome(), w.chunks)
			}
			for _, step := range w.steps[1:] {
				if step != w.steps[0] {
					t.Fatalf("pieces posted after %v Steps: one Step each, not one for all", w.steps)
				}
			}
		})
	}
}
