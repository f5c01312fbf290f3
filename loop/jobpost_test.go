package loop

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
)

// Post never waits: a piece that fills the outbox reports it, and the
// loop calls OnJobWritten with the owner once it has moved the outbox to
// the connection; the poster then posts again. Every byte arrives, in
// order, and each full Post is answered by one OnJobWritten.
func TestPostAndOnJobWritten(t *testing.T) {
	const pieces = 6
	piece := bytes.Repeat([]byte("p"), outboxLimit-100)
	written := make(chan any, pieces)
	var full atomic.Int32
	work := func(j *Job) {
		j.SetOwner("poster")
		for i := 0; i < pieces; i++ {
			piece[0] = byte('0' + i)
			f, err := j.Post(piece)
			if err != nil {
				t.Errorf("Post %d: %v", i, err)
				j.Abort()
				return
			}
			if f {
				full.Add(1)
				if owner := <-written; owner != "poster" {
					t.Errorf("OnJobWritten(%v)", owner)
				}
			}
		}
		j.Finish()
	}
	configure := func(c *Config) {
		c.OnJobWritten = func(owner any) { written <- owner }
	}
	deferredHarness(t, deferEverything, work, configure)(func(t *testing.T, hs *harness) {
		full.Store(0)
		c := hs.connect()
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		got := hs.responses(c, 1)[0]
		_, body, _ := strings.Cut(got, "\r\n\r\n")
		var want strings.Builder
		for i := 0; i < pieces; i++ {
			piece[0] = byte('0' + i)
			want.Write(piece)
		}
		if decoded := dechunk(body); decoded != want.String() {
			t.Fatalf("body of %d bytes, want %d", len(decoded), want.Len())
		}
		// A piece just under the limit fills the outbox once another
		// waits in it: every second Post at least.
		if n := full.Load(); n < pieces/2 || len(written) != 0 {
			t.Fatalf("%d full posts, %d OnJobWritten left over", n, len(written))
		}
	})
}
