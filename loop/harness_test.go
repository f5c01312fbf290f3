package loop

import (
	"strings"
	"testing"
	"time"
)

// harness drives a Loop over a fakeBackend from the test goroutine, one
// pass at a time, with a clock the test moves.
type harness struct {
	t     *testing.T
	fb    *fakeBackend
	l     *Loop
	clock int64
}

func newHarness(t testing.TB, h Handler, configure func(*Config)) *harness {
	fb := newFakeBackend()
	cfg := Config{
		NewBackend: func() (Backend, error) { return fb, nil },
		ListenFD:   fakeFDBase,
		Handler:    h,
		Server:     []byte("test"),
	}
	if configure != nil {
		configure(&cfg)
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{fb: fb, l: l, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()}
	if tt, ok := t.(*testing.T); ok {
		hs.t = tt
	}
	l.timeNow = func() int64 { return hs.clock }
	l.backend = fb
	l.started.Store(true)
	l.start()
	return hs
}

// until runs passes until cond holds, failing after 5 s of real time (a
// generous bound for a loaded machine; nothing here asserts speed).
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("gave up waiting for %s", what)
		}
		if err := h.l.pass(); err != nil {
			h.t.Fatal(err)
		}
	}
}

// untilReceived runs passes until ch has a value, and returns it (until's
// bound applies).
func untilReceived[T any](h *harness, what string, ch <-chan T) T {
	h.t.Helper()
	var v T
	h.until(what, func() bool {
		select {
		case v = <-ch:
			return true
		default:
			return false
		}
	})
	return v
}

// passes runs n passes.
func (h *harness) passes(n int) {
	for i := 0; i < n; i++ {
		if err := h.l.pass(); err != nil {
			h.t.Fatal(err)
		}
	}
}

// advanceClock moves the fake clock and runs a pass so the sweep sees it.
func (h *harness) advanceClock(d time.Duration) {
	h.clock += int64(d)
	h.passes(2)
}

func (h *harness) connect() *fakeConn {
	c := h.fb.dial()
	h.until("accept", func() bool { return c.accepted })
	return c
}

// responses waits until the output on c holds n complete responses
// (status line through body, using Content-Length or chunked framing
// only) and returns them.
func (h *harness) responses(c *fakeConn, n int) []string {
	h.t.Helper()
	var got []string
	h.until("responses", func() bool {
		var ok bool
		got, ok = splitResponses(h.fb.output(c), n)
		return ok
	})
	return got
}

// splitResponses splits raw output into n responses, or reports false if
// fewer than n are complete.
func splitResponses(out string, n int) ([]string, bool) {
	var res []string
	for len(res) < n {
		end := strings.Index(out, "\r\n\r\n")
		if end < 0 {
			return nil, false
		}
		head := out[:end+4]
		rest := out[end+4:]
		if strings.HasPrefix(head, "HTTP/1.1 100 ") {
			res = append(res, head)
			out = rest
			continue
		}
		length := -1
		chunked := false
		for _, line := range strings.Split(head, "\r\n") {
			lower := strings.ToLower(line)
			if v, ok := strings.CutPrefix(lower, "content-length: "); ok {
				length = atoi(v)
			}
			if lower == "transfer-encoding: chunked" {
				chunked = true
			}
		}
		switch {
		case chunked:
			last := strings.Index(rest, "\r\n0\r\n\r\n")
			if strings.HasPrefix(rest, "0\r\n\r\n") {
				last = -2
			}
			if last == -1 {
				return nil, false
			}
			end := last + len("\r\n0\r\n\r\n")
			res = append(res, head+rest[:end])
			out = rest[end:]
		case length >= 0:
			if len(rest) < length {
				return nil, false
			}
			res = append(res, head+rest[:length])
			out = rest[length:]
		default:
			res = append(res, head)
			out = rest
		}
	}
	return res, true
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
