package http1

import (
	"fmt"
	"strings"
	"testing"
)

// describe renders everything a parse produced, so two parses of the same
// bytes can be compared whole.
func describe(buf []byte, r *Request, n int, err error) string {
	if err != nil {
		if e, ok := err.(*Error); ok {
			return fmt.Sprintf("error %d %s", e.Status, e.Reason)
		}
		return "error " + err.Error()
	}
	r.Rebase(buf)
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d %s %q %q %q form=%d v=%d cl=%d chunked=%v ka=%v e100=%v up=%v\n",
		n, r.Bytes(r.Method), r.Bytes(r.Target), r.Bytes(r.Path), r.Bytes(r.Query), r.Form,
		r.Version, r.ContentLength, r.Chunked, r.KeepAlive, r.Expect100, r.Upgrade)
	for i := 0; i < r.Header.Len(); i++ {
		name, value := r.Header.Field(i)
		fmt.Fprintf(&b, "%q: %q\n", name, value)
	}
	return b.String()
}

// parseSplit parses buf delivered in pieces that end at each of cuts, then
// whole, reusing one Parser and Request as a connection does.
func parseSplit(buf []byte, cuts ...int) string {
	var p Parser
	var r Request
	for _, cut := range cuts {
		// A fresh slice each time: the caller's buffer may move between
		// reads (a grown receive buffer), only its contents are kept.
		prefix := append([]byte(nil), buf[:cut]...)
		n, err := p.Parse(prefix, &r)
		if err != ErrIncomplete {
			return describe(prefix, &r, n, err)
		}
	}
	n, err := p.Parse(buf, &r)
	return describe(buf, &r, n, err)
}

var splitHeads = []string{
	"GET /a/b?c=d HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nX-Long-Name-Of-A-Field: value with\ttab and spaces  \r\n\r\n",
	"POST http://h/x HTTP/1.1\nHost: h\nContent-Length: 12\nConnection: keep-alive\n\n",
	"\r\n\r\nPUT / HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n",
	"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nBad Name: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
}

// TestSplitAtEveryByte: a head cut into two reads at any byte, or sent a
// byte at a time, parses to exactly what the whole head parses to.
func TestSplitAtEveryByte(t *testing.T) {
	for _, head := range splitHeads {
		buf := []byte(head)
		whole := parseSplit(buf)
		for cut := 1; cut < len(buf); cut++ {
			if got := parseSplit(buf, cut); got != whole {
				t.Errorf("%q cut at %d:\n%s\nwant\n%s", head, cut, got, whole)
			}
		}
		cuts := make([]int, 0, len(buf))
		for i := 1; i < len(buf); i++ {
			cuts = append(cuts, i)
		}
		if got := parseSplit(buf, cuts...); got != whole {
			t.Errorf("%q byte at a time:\n%s\nwant\n%s", head, got, whole)
		}
	}
}

// TestIncrementalScansOnce: a long head sent a byte at a time costs a
// number of byte inspections linear in its length, not quadratic. The
// parser's resume point is what is checked: after each incomplete call it
// must sit at the end of the bytes seen so far (or one before, on a CR).
func TestIncrementalScansOnce(t *testing.T) {
	head := "GET /" + strings.Repeat("x", 3000) + " HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("y", 3000) + "\r\n\r\n"
	var p Parser
	var r Request
	for i := 1; i < len(head); i++ {
		_, err := p.Parse([]byte(head[:i]), &r)
		if err != ErrIncomplete {
			t.Fatalf("at %d: %v", i, err)
		}
		if p.scan != i && !(p.scan == i-1 && head[i-1] == '\r') {
			t.Fatalf("after %d bytes the scan resumes at %d", i, p.scan)
		}
	}
}

func TestLimits(t *testing.T) {
	pad := func(line string, total int, tail string) string {
		// Fill an X-Pad field so the whole head is exactly total bytes.
		fixed := len(line) + len("X-Pad: \r\n") + len(tail)
		return line + "X-Pad: " + strings.Repeat("p", total-fixed) + "\r\n" + tail
	}
	const line = "GET / HTTP/1.1\r\nHost: h\r\n"
	limits := Limits{MaxHeadBytes: 8192, MaxFields: 100}
	cases := []struct {
		name   string
		head   string
		status int
	}{
		{"head at the limit", pad(line, 8192, "\r\n"), 0},
		{"head one byte over", pad(line, 8193, "\r\n"), 431},
		{"request line at the limit", "GET /" + strings.Repeat("a", 8192-len("GET / HTTP/1.1\r\n\r\n")) + " HTTP/1.0\r\n\r\n", 0},
		{"request line over the limit", "GET /" + strings.Repeat("a", 8200) + " HTTP/1.1\r\nHost: h\r\n\r\n", 414},
		{"request line over the limit, unterminated", "GET /" + strings.Repeat("a", 8200), 414},
		{"fields unterminated over the limit", line + strings.Repeat("X-A: b\r\n", 1200), 431},
		{"100 fields", "GET / HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", 99) + "Host: h\r\n\r\n", 0},
		{"101 fields", "GET / HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", 100) + "Host: h\r\n\r\n", 431},
	}
	for _, c := range cases {
		p := Parser{Limits: limits}
		var r Request
		_, err := p.Parse([]byte(c.head), &r)
		got := 0
		if e, ok := err.(*Error); ok {
			got = e.Status
		} else if err != nil {
			got = -1
		}
		if got != c.status {
			t.Errorf("%s (%d bytes): status %d (%v), want %d", c.name, len(c.head), got, err, c.status)
		}
	}
}

// TestLengthSweeps crosses every hand-off between the 8-byte scan and its
// scalar tail: names, values and targets of 1 to 140 bytes, each parsed
// exactly, and each refused when one byte in it is made invalid.
func TestLengthSweeps(t *testing.T) {
	for n := 1; n <= 140; n++ {
		name := strings.Repeat("n", n)
		value := strings.Repeat("v", n)
		target := "/" + strings.Repeat("t", n-1)
		head := "GET " + target + " HTTP/1.1\r\nHost: h\r\n" + name + ": " + value + "\r\n\r\n"
		r := parseAll(t, head)
		gotName, gotValue := r.Header.Field(1)
		if string(gotName) != name || string(gotValue) != value || string(r.Bytes(r.Target)) != target {
			t.Fatalf("n=%d: name %d value %d target %d bytes", n, len(gotName), len(gotValue), r.Target.Len())
		}
		for at := 0; at < n; at++ {
			bad := []byte(value)
			bad[at] = 0x01
			if s, _ := statusOf("GET / HTTP/1.1\r\nHost: h\r\nX: " + string(bad) + "\r\n\r\n"); s != 400 {
				t.Fatalf("value of %d with CTL at %d: status %d", n, at, s)
			}
			bad[at] = '\r'
			if s, _ := statusOf("GET / HTTP/1.1\r\nHost: h\r\nX: " + string(bad) + "\r\n\r\n"); s != 400 {
				t.Fatalf("value of %d with bare CR at %d: status %d", n, at, s)
			}
			badName := []byte(name)
			badName[at] = '@'
			if s, _ := statusOf("GET / HTTP/1.1\r\nHost: h\r\n" + string(badName) + ": v\r\n\r\n"); s != 400 {
				t.Fatalf("name of %d with '@' at %d: status %d", n, at, s)
			}
			badTarget := []byte(target)
			if at > 0 {
				badTarget[at] = 0x80
				if s, _ := statusOf("GET " + string(badTarget) + " HTTP/1.1\r\nHost: h\r\n\r\n"); s != 400 {
					t.Fatalf("target of %d with 0x80 at %d: status %d", n, at, s)
				}
			}
		}
	}
}
