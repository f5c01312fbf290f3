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
// order, and each full Post is answered by one OnJobWritten. Pieces
// alternate between the outbox's limit (full whatever the loop has sent)
// and a small one posted into the outbox OnJobWritten found moved (never
// full), so the count of full posts does not hang on the loop's timing.
func TestPostAndOnJobWritten(t *testing.T) {
	const pieces = 6
	pieceOf := func(i int) []byte {
		size := 100
		if i%2 == 0 {
			size = outboxLimit
		}
		piece := bytes.Repeat([]byte("p"), size)
		piece[0] = byte('0' + i)
		return piece
	}
	written := make(chan any, pieces)
	var full atomic.Int32
	work := func(j *Job) {
		j.SetOwner("poster")
		for i := 0; i < pieces; i++ {
			f, err := j.Post(pieceOf(i))
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
			want.Write(pieceOf(i))
		}
		if decoded := dechunk(body); decoded != want.String() {
			t.Fatalf("body of %d bytes, want %d", len(decoded), want.Len())
		}
		if n := full.Load(); n != pieces/2 || len(written) != 0 {
			t.Fatalf("%d full posts, %d OnJobWritten left over", n, len(written))
		}
	})
}
