package pybridge

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// serveInline runs j on a thread attached as the loop thread is.
func serveInline(t *testing.T, j *Job) {
	t.Helper()
	onInlineThread(t, func(in *Inline) { in.Serve(j) })
}

// onInlineThread calls serve on a locked thread attached as the loop
// thread is, then detaches it.
func onInlineThread(t *testing.T, serve func(*Inline)) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		in, err := interp.AttachInline()
		if err != nil {
			done <- err
			return
		}
		serve(in)
		in.Detach()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// suspendInline serves GET target with app inline, the job's limits set
// by limit, and fails the test unless the response was suspended.
func suspendInline(t *testing.T, app, target string, limit func(*Job)) *Job {
	t.Helper()
	j := newJob(t, loadApp(t, app), "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n")
	limit(j)
	serveInline(t, j)
	if got := j.Response.Outcome(); got != Suspended {
		t.Fatalf("outcome %d, want Suspended", got)
	}
	return j
}

// resumeOnHandler goes on with a suspended response on a handler thread,
// through a recorder, as the server hands it over.
func resumeOnHandler(t *testing.T, suspended *Job) *recorder {
	t.Helper()
	j := newJob(t, suspended.App, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	j.Response.Free()
	j.Response, suspended.Response = suspended.Response, nil
	rec := &recorder{}
	j.Writer, j.Resume = rec, true
	run(j)
	if j.Response.Outcome() != Streamed {
		t.Fatalf("resumed outcome %d, want Streamed", j.Response.Outcome())
	}
	suspended.Response = j.Response
	return rec
}

// Past its GatherLimit an inline job stops gathering: the body so far and
// the iterator wait in the Response, and a handler thread sends the head,
// that body and the rest, in order, then closes the iterable.
func TestInlineSuspendsPastGatherLimit(t *testing.T) {
	j := suspendInline(t, "body_app:stream", "/stream", func(j *Job) { j.GatherLimit = 1 << 20 })
	if n := len(j.Response.Body()); n <= 1<<20 || n > 1<<20+64<<10 {
		t.Fatalf("gathered %d bytes, want just past 1 MiB", n)
	}
	rec := resumeOnHandler(t, j)
	var want bytes.Buffer
	for i := 0; i < 48; i++ {
		want.WriteString(strings.Repeat(fmt.Sprintf("%08d", i), 8192))
	}
	if got := strings.Join(rec.chunks, ""); got != want.String() {
		t.Fatalf("body of %d bytes differs from the %d sent", len(got), want.Len())
	}
	if rec.heads != 1 || rec.status != 200 {
		t.Fatalf("%d heads, status %d", rec.heads, rec.status)
	}
	if j.Response.ContentLength() != -1 {
		t.Fatalf("content length %d, want -1 (chunked)", j.Response.ContentLength())
	}
}

// A list body over the limit is left whole and sent with its length.
func TestInlineSuspendsLongList(t *testing.T) {
	j := suspendInline(t, "body_app:huge", "/huge", func(j *Job) { j.GatherLimit = 1 << 20 })
	if n := len(j.Response.Body()); n != 0 {
		t.Fatalf("gathered %d bytes of a list, want none", n)
	}
	rec := resumeOnHandler(t, j)
	if got := strings.Join(rec.chunks, ""); got != strings.Repeat("x", 2000000) {
		t.Fatalf("body of %d bytes, want 2000000 x", len(got))
	}
	if j.Response.ContentLength() != 2000000 {
		t.Fatalf("content length %d, want 2000000", j.Response.ContentLength())
	}
}

// Under the limit nothing changes: Complete, gathered whole.
func TestInlineGathersUnderLimit(t *testing.T) {
	app := loadApp(t, "body_app:big")
	j := newJob(t, app, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	j.GatherLimit = 1 << 20
	serveInline(t, j)
	if j.Response.Outcome() != Complete || len(j.Response.Body()) != 120000 {
		t.Fatalf("outcome %d, %d bytes", j.Response.Outcome(), len(j.Response.Body()))
	}
}

// A body still coming past GatherTime is not gathered further: the
// blocks so far wait in the Response and the rest streams from a handler
// thread, rather than every block waiting for the last.
func TestInlineSuspendsPastGatherTime(t *testing.T) {
	j := suspendInline(t, "body_app:slow", "/slow", func(j *Job) { j.GatherTime = time.Millisecond })
	// "a" alone when the call itself ran past the millisecond (a busy
	// machine); never "abc", which would have waited for the last block.
	if got := string(j.Response.Body()); got != "ab" && got != "a" {
		t.Fatalf("gathered %q, want the blocks before the time ran out", got)
	}
	rec := resumeOnHandler(t, j)
	if got := strings.Join(rec.chunks, ""); got != "abc" {
		t.Fatalf("sent %q, want abc", got)
	}
}
