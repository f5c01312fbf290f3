package pybridge

import (
	"runtime"
	"testing"
	"time"
)

// panickingCompleter panics on every job, as a bug in the server's
// Completer would.
type panickingCompleter struct{}

func (panickingCompleter) Complete(*Job) { panic("completer bug") }

// A panic in a Go callback of the ASGI executor (here the Completer,
// called from C with the GIL held on the loop thread) does not unwind
// through the C and Python frames below it: Step raises it again with the
// GIL released, and the event loop can still be left and stopped. Before,
// the panic left the GIL held by the loop thread: LeaveLoop waited for it
// for ever.
func TestASGICallbackPanicSurfacesOutOfPython(t *testing.T) {
	app := loadApp(t, "asgi_settle_app:app")
	q := NewQueue(16)
	ex, err := interp.StartASGI(app, ASGIOptions{Loop: LoopAsyncio, Driven: true}, q, panickingCompleter{})
	if err != nil {
		t.Fatal(err)
	}
	j := (&asgiServer{app: app}).job(t, "GET /started HTTP/1.1\r\nHost: x\r\n\r\n")
	defer j.Response.Free()
	q.Push(j)
	recovered := make(chan any, 1)
	left := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(left)
		func() {
			defer func() { recovered <- recover() }()
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
				ex.Step(time.Now().UnixNano())
				time.Sleep(time.Millisecond)
			}
		}()
		ex.LeaveLoop()
	}()
	if got := <-recovered; got != "completer bug" {
		t.Fatalf("Step raised %v, want the completer's panic", got)
	}
	select {
	case <-left:
	case <-time.After(20 * time.Second):
		t.Fatal("LeaveLoop never returned: the GIL is still held")
	}
	q.Close()
	if err := ex.Stop(); err != nil {
		t.Fatal(err)
	}
}
