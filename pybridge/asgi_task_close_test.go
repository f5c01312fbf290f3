package pybridge

import (
	"testing"
	"time"
)

// A request task whose coroutine ignores GeneratorExit, closed (its
// close raises) or collected unfinished, still completes its job (503)
// and gives its slot back. Before, a close that raised returned before
// the cancel and the release, and a collected task's coroutine was
// cleared by the collector before it could close: either way the client
// waited until shutdown.
func TestASGITaskClosedWhileIgnoringExit(t *testing.T) {
	for _, c := range []struct{ how, path, seen string }{
		{"closed", "/close-task", "closed coroutine ignored GeneratorExit"},
		{"collected", "/gc", "closed"},
	} {
		t.Run(c.how, func(t *testing.T) {
			s := startASGI(t, "asgi_settle_app:app", ASGIOptions{Loop: LoopAsyncio})
			j := s.job(t, "GET /ignores-exit HTTP/1.1\r\nHost: x\r\n\r\n")
			done := waiting.add(j)
			s.queue.Push(j)
			// The task has started once a request queued after it runs.
			s.get(t, "/started")
			s.get(t, c.path)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the task's job never completed")
			}
			if st := j.Response.Status(); st != 503 {
				t.Fatalf("status %d, want 503", st)
			}
			if seen := string(s.get(t, "/seen").Response.Body()); seen != c.seen {
				t.Fatalf("the app saw %q, want %q", seen, c.seen)
			}
		})
	}
}
