package loop

import (
	"strings"
	"sync"
	"testing"
)

// jobGoneRecorder collects the owners OnJobGone was called with.
type jobGoneRecorder struct {
	mu     sync.Mutex
	owners []any
	owned  chan struct{} // the waiting job's owner is set
	gone   chan struct{} // closed at the first call
}

func (r *jobGoneRecorder) hook(owner any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.owners) == 0 {
		close(r.gone)
	}
	r.owners = append(r.owners, owner)
}

// A client ending its side while a handler holds its job (its body read)
// reaches OnJobGone with the handler's owner, on every receive mode (a
// receive stays armed for it); the loop still delivers the response the
// handler then writes (a half-closed client may read it). A job finished
// normally is never reported.
func TestOnJobGoneAtEndOfInput(t *testing.T) {
	var rec *jobGoneRecorder
	work := func(j *Job) {
		owner := "owner of " + string(j.Request.Bytes(j.Request.Target))
		if j.SetOwner(owner) != 0 {
			rec.hook("gone at SetOwner: " + owner)
		}
		if strings.HasSuffix(owner, "/wait") {
			close(rec.owned)
			<-rec.gone
		}
		j.SetHeader("X-Owner", owner)
		j.Write([]byte("answered"))
		j.Finish()
	}
	configure := func(c *Config) {
		c.OnJobGone = func(owner any, how JobGone) {
			if how != InputEnded {
				owner = "closed: " + owner.(string)
			}
			rec.hook(owner)
		}
	}
	deferredHarness(t, deferEverything, work, configure)(func(t *testing.T, hs *harness) {
		rec = &jobGoneRecorder{owned: make(chan struct{}), gone: make(chan struct{})}
		c := hs.connect()
		hs.fb.write(c, "GET /quick HTTP/1.1\r\nHost: x\r\n\r\n")
		if got := hs.responses(c, 1); !strings.Contains(got[0], "X-Owner: owner of /quick") {
			t.Fatalf("quick: %q", got[0])
		}
		hs.fb.write(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
		// An end of input before SetOwner is not reported (see OnJobGone).
		hs.until("the owner set", func() bool {
			select {
			case <-rec.owned:
				return true
			default:
				return false
			}
		})
		hs.fb.shutdownWrite(c)
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
		out := hs.fb.output(c)
		if !strings.Contains(out, "X-Owner: owner of /wait") || !strings.HasSuffix(out, "answered\r\n0\r\n\r\n") {
			t.Fatalf("the response after the end of input: %q", out)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.owners) != 1 || rec.owners[0] != "owner of /wait" {
			t.Fatalf("OnJobGone got %q, want the waiting job's owner once", rec.owners)
		}
	})
}

// An end of input before the handler sets its owner is SetOwner's to
// report, not OnJobGone's.
func TestSetOwnerReportsEarlyEndOfInput(t *testing.T) {
	taken := make(chan *Job, 1)
	release := make(chan struct{})
	work := func(j *Job) {
		taken <- j
		<-release
		j.Finish()
	}
	var hooked []any
	configure := func(c *Config) { c.OnJobGone = func(owner any, _ JobGone) { hooked = append(hooked, owner) } }
	deferredHarness(t, deferEverything, work, configure)(func(t *testing.T, hs *harness) {
		hooked = nil
		c := hs.connect()
		hs.fb.write(c, "GET /early HTTP/1.1\r\nHost: x\r\n\r\n")
		j := untilReceived(hs, "the job taken", taken)
		hs.fb.shutdownWrite(c)
		hs.until("the end of input seen", func() bool {
			j.mu.Lock()
			defer j.mu.Unlock()
			return j.inputEnded
		})
		if j.SetOwner("late owner") != InputEnded {
			t.Fatal("SetOwner after the end of input did not report it")
		}
		release <- struct{}{}
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
		if len(hooked) != 0 {
			t.Fatalf("OnJobGone called with %q for a job without an owner", hooked)
		}
	})
}
