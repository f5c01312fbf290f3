package pybridge

import "testing"

// An inline thread serves a job on the caller's own locked thread, with
// the GIL only during Serve; Detach gives the handler count back, so the
// interpreter could close.
func TestInlineServesOnTheCallersThread(t *testing.T) {
	app := loadApp(t, "bench_app:app")
	j := newJob(t, app, benchHead)
	before := handlerCount()
	onInlineThread(t, func(in *Inline) {
		if handlerCount() != before+1 {
			t.Errorf("handler groups %d while attached, want %d", handlerCount(), before+1)
		}
		for i := 0; i < 3; i++ {
			in.Serve(j)
		}
	})
	r := j.Response
	if r.Outcome() != Complete || r.Status() != 200 || string(r.Body()) != "Hello, World!" {
		t.Fatalf("outcome %d status %d body %q", r.Outcome(), r.Status(), r.Body())
	}
	if handlerCount() != before {
		t.Fatalf("handler groups %d after Detach, want %d", handlerCount(), before)
	}
}

func handlerCount() int {
	interp.mu.Lock()
	defer interp.mu.Unlock()
	return interp.handlers
}
