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
		s := startASGI(t, "asgi_concurrent_send_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
		w := &postingWriter{pieces: make(chan string, 64)}
		j.Writer = w
		done := waiting.add(j)
		s.queue.Push(j)
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
