package loop

import (
	"strings"
	"testing"
)

// A handler that posts its head, writes, then aborts before the loop has
// encoded anything: the client gets that head and the body so far, then
// the close with no terminal chunk — never a 500 instead (Abort sends a
// 500 only when no head was posted), whichever pass sees the abort.
func TestHandlerAbortAfterPostedHead(t *testing.T) {
	work := func(j *Job) {
		j.SetHeader("X-Posted", "yes")
		j.WriteHeader(200, -1)
		j.Write([]byte("partial"))
		j.Abort()
	}
	deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
		for i := 0; i < 20; i++ {
			c := hs.connect()
			hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			hs.until("close", func() bool { return hs.fb.isClosed(c) })
			out := hs.fb.output(c)
			if !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") || !strings.Contains(out, "X-Posted: yes\r\n") ||
				!strings.HasSuffix(out, "\r\n\r\n7\r\npartial\r\n") {
				t.Fatalf("round %d: want the posted head and the partial body, then the close:\n%q", i, out)
			}
		}
	})
}
