package loop

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// trailerAnswer sets one trailer before the head and one after the body,
// and answers /length with a known length, everything else chunked.
func trailerAnswer(j *Job) {
	j.SetTrailer("X-Checksum", " 1 ")
	length := int64(-1)
	if string(j.Request.Bytes(j.Request.Path)) == "/length" {
		length = 4
	}
	j.WriteHeader(200, length)
	j.Write([]byte("body"))
	j.SetTrailerBytes([]byte("X-Count"), []byte("2"))
	j.Finish()
}

// splitAtBody returns what follows the first head in out.
func splitAtBody(t *testing.T, out string) (head, rest string) {
	t.Helper()
	head, rest, ok := strings.Cut(out, "\r\n\r\n")
	if !ok {
		t.Fatalf("no head in %q", out)
	}
	return head, rest
}

func TestTrailersEndChunkedBody(t *testing.T) {
	deferredHarness(t, deferEverything, trailerAnswer, nil)(func(t *testing.T, hs *harness) {
		c := hs.connect()
		// A known-length response pipelined after the chunked one shows
		// the trailer section ended the first body where a client reads
		// its end.
		hs.fb.write(c, "GET /chunked HTTP/1.1\r\nHost: x\r\n\r\nGET /length HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.until("both responses", func() bool {
			out := hs.fb.output(c)
			return strings.Count(out, "HTTP/1.1 200 OK\r\n") == 2 && strings.HasSuffix(out, "\r\n\r\nbody")
		})
		out := hs.fb.output(c)
		head, rest := splitAtBody(t, out)
		if !strings.Contains(head, "Transfer-Encoding: chunked") {
			t.Fatalf("first response not chunked:\n%s", out)
		}
		want := "4\r\nbody\r\n0\r\nX-Checksum: 1\r\nX-Count: 2\r\n\r\nHTTP/1.1 200 OK\r\n"
		if !strings.HasPrefix(rest, want) {
			t.Fatalf("want the body, the trailer section, then the next response:\n%q", out)
		}
		second, body := splitAtBody(t, rest[len(want)-len("HTTP/1.1 200 OK\r\n"):])
		if !strings.Contains(second, "Content-Length: 4") || strings.Contains(second, "X-Checksum") || body != "body" {
			t.Fatalf("known length: trailers must be dropped, the body intact:\n%q", out)
		}
		if hs.fb.isClosed(c) {
			t.Fatal("connection closed after a response with trailers")
		}
	})
}

func TestTrailersDroppedWithoutChunkedBody(t *testing.T) {
	deferredHarness(t, deferEverything, trailerAnswer, nil)(func(t *testing.T, hs *harness) {
		// HEAD: no body and no trailer section, and the connection
		// stays framed for the next response.
		c := hs.connect()
		hs.fb.write(c, "HEAD /chunked HTTP/1.1\r\nHost: x\r\n\r\nGET /length HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.until("both responses", func() bool {
			out := hs.fb.output(c)
			return strings.Count(out, "HTTP/1.1 200 OK\r\n") == 2 && strings.HasSuffix(out, "\r\n\r\nbody")
		})
		out := hs.fb.output(c)
		if strings.Contains(out, "X-Checksum") || strings.Contains(out, "0\r\n") {
			t.Fatalf("HEAD carried trailers:\n%q", out)
		}
		if _, rest := splitAtBody(t, out); !strings.HasPrefix(rest, "HTTP/1.1 200 OK\r\n") {
			t.Fatalf("HEAD carried a body:\n%q", out)
		}

		// HTTP/1.0: the body ends with the close, with no room for a
		// trailer section.
		c = hs.connect()
		hs.fb.write(c, "GET /chunked HTTP/1.0\r\n\r\n")
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
		out = hs.fb.output(c)
		if _, rest := splitAtBody(t, out); rest != "body" {
			t.Fatalf("HTTP/1.0: want the bare body, then the close:\n%q", out)
		}
	})
}

func TestSetTrailerRefusesFields(t *testing.T) {
	var j Job
	for _, name := range []string{"Content-Length", "transfer-encoding", "TRAILER", "Host", "Authorization",
		"Set-Cookie", "Content-Type", "Cache-Control", "Date", "Connection", "TE"} {
		if err := j.SetTrailer(name, "1"); !errors.Is(err, ErrTrailerRefused) {
			t.Errorf("SetTrailer(%q): %v, want ErrTrailerRefused", name, err)
		}
		if err := j.SetTrailerBytes([]byte(name), []byte("1")); !errors.Is(err, ErrTrailerRefused) {
			t.Errorf("SetTrailerBytes(%q): %v, want ErrTrailerRefused", name, err)
		}
	}
	invalid := []struct{ name, value string }{
		{"Bad Name", "1"},
		{"", "1"},
		{"X-Split", "1\r\nContent-Length: 0"},
		{"X-Nul", "a\x00b"},
	}
	for _, f := range invalid {
		if err := j.SetTrailer(f.name, f.value); err == nil || errors.Is(err, ErrTrailerRefused) {
			t.Errorf("SetTrailer(%q, %q): %v, want a field error", f.name, f.value, err)
		}
		if err := j.SetTrailerBytes([]byte(f.name), []byte(f.value)); err == nil || errors.Is(err, ErrTrailerRefused) {
			t.Errorf("SetTrailerBytes(%q, %q): %v, want a field error", f.name, f.value, err)
		}
	}
	// Names that merely resemble refused ones pass.
	for _, name := range []string{"Server-Timing", "Content-Lengths", "X-Host", "Digest"} {
		if err := j.SetTrailer(name, "v"); err != nil {
			t.Errorf("SetTrailer(%q): %v", name, err)
		}
	}
	want := "Server-Timing: v\r\nContent-Lengths: v\r\nX-Host: v\r\nDigest: v\r\n"
	if string(j.trailers) != want {
		t.Fatalf("trailer section %q, want %q (refused and invalid fields add nothing)", j.trailers, want)
	}

	j.aborted = true // as Abort or a closed connection leaves it
	if err := j.SetTrailer("X-Late", "1"); !errors.Is(err, ErrAborted) {
		t.Fatalf("after Abort: %v, want ErrAborted", err)
	}
}

// trailerRig serves one keep-alive connection whose responses are chunked
// and end with a trailer, through the deferred path.
type trailerRig struct {
	tb testing.TB
	hs *harness
	c  *fakeConn
	q  *JobQueue
}

var (
	sumName  = []byte("X-Sum")
	sumValue = []byte("1")
	sumEnd   = []byte("\r\n0\r\nX-Sum: 1\r\n\r\n")
)

func newTrailerRig(tb testing.TB) *trailerRig {
	q := NewJobQueue(16)
	hs := newHarness(tb, deferEverything, func(c *Config) { c.Jobs = q })
	go func() {
		for j := q.Take(); j != nil; j = q.Take() {
			j.SetTrailerBytes(sumName, sumValue)
			j.WriteHeader(200, -1)
			j.Write(okBody)
			j.Finish()
		}
	}()
	c := hs.fb.dial()
	for !c.accepted {
		hs.l.pass()
	}
	r := &trailerRig{tb: tb, hs: hs, c: c, q: q}
	for i := 0; i < 100; i++ {
		r.round()
	}
	return r
}

// round sends one request and runs passes until its response has ended
// with the trailer section; a response that never does fails the test
// (after a bound generous for a loaded machine) rather than hanging it.
func (r *trailerRig) round() {
	start := time.Now()
	fb := r.hs.fb
	fb.mu.Lock()
	r.c.in = append(r.c.in, browserRequest...)
	r.c.out = r.c.out[:0]
	fb.mu.Unlock()
	for {
		r.hs.l.pass()
		fb.mu.Lock()
		out := r.c.out
		done := len(out) >= len(sumEnd) && string(out[len(out)-len(sumEnd):]) == string(sumEnd)
		fb.mu.Unlock()
		if done {
			return
		}
		if time.Since(start) > 5*time.Second {
			r.tb.Fatalf("no response ending in %q; output %q", sumEnd, r.hs.fb.output(r.c))
		}
	}
}

func TestTrailerPathAllocatesNothing(t *testing.T) {
	r := newTrailerRig(t)
	defer r.q.Close()
	if allocs := testing.AllocsPerRun(500, r.round); allocs != 0 {
		t.Fatalf("%v allocations per chunked response with a trailer, want 0", allocs)
	}
}

func BenchmarkTrailerRoundTrip(b *testing.B) {
	r := newTrailerRig(b)
	defer r.q.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.round()
	}
}
