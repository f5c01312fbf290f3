package http1

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"testing"
)

// registered lists every code of the IANA registry the brief names, so a
// code dropped from the table fails here, not in production.
var registered = []int{
	100, 101, 102, 103,
	200, 201, 202, 203, 204, 205, 206, 207, 208, 226,
	300, 301, 302, 303, 304, 305, 306, 307, 308,
	400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418,
	421, 422, 423, 424, 425, 426, 428, 429, 431, 451,
	500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
}

func TestStatusTextRegistered(t *testing.T) {
	isRegistered := map[int]bool{}
	for _, code := range registered {
		isRegistered[code] = true
		if StatusText(code) == "" {
			t.Errorf("StatusText(%d) is empty", code)
		}
	}
	for code := -1; code <= 1000; code++ {
		if !isRegistered[code] && StatusText(code) != "" {
			t.Errorf("StatusText(%d) = %q, want empty for an unregistered code", code, StatusText(code))
		}
	}
}

// Where Go's table and the registry agree the phrases must match; the
// deliberate differences are listed.
func TestStatusTextMatchesNetHTTP(t *testing.T) {
	differs := map[int]string{
		306: "(Unused)", // Go has no text
		418: "(Unused)", // Go: "I'm a teapot"
		// RFC 9110 renamed these; Go keeps the RFC 7231 phrases.
		413: "Content Too Large",
		414: "URI Too Long",
		416: "Range Not Satisfiable",
		422: "Unprocessable Content",
	}
	for _, code := range registered {
		want, ok := differs[code]
		if !ok {
			want = http.StatusText(code)
		}
		if got := StatusText(code); got != want {
			t.Errorf("StatusText(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestAppendStatusLine(t *testing.T) {
	for code := -5; code <= 1005; code++ {
		prefix := []byte("keep")
		got := AppendStatusLine(prefix, code)
		if !bytes.HasPrefix(got, []byte("keep")) {
			t.Fatalf("code %d: prefix overwritten: %q", code, got)
		}
		got = got[len("keep"):]
		want := fmt.Sprintf("HTTP/1.1 %d %s\r\n", code, StatusText(code))
		if !ValidStatus(code) {
			want = "HTTP/1.1 500 Internal Server Error\r\n"
		}
		if string(got) != want {
			t.Errorf("AppendStatusLine(%d) = %q, want %q", code, got, want)
		}
	}
}

// net/http's own response reader is an independent judge of the line.
func TestAppendStatusLineReadByNetHTTP(t *testing.T) {
	for code := 100; code <= 999; code++ {
		head := AppendStatusLine(nil, code)
		head = append(head, "Content-Length: 0\r\n\r\n"...)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
		if err != nil {
			t.Fatalf("code %d: net/http refuses %q: %v", code, head, err)
		}
		if resp.StatusCode != code || resp.ProtoMajor != 1 || resp.ProtoMinor != 1 {
			t.Errorf("code %d: net/http read status %d proto %s", code, resp.StatusCode, resp.Proto)
		}
	}
}

func TestAppendStatusLineReason(t *testing.T) {
	tests := []struct {
		status int
		reason string
		want   string // "" means refused
	}{
		{200, "OK", "HTTP/1.1 200 OK\r\n"},
		{200, "", "HTTP/1.1 200 \r\n"},
		{404, "Nope\tnot here", "HTTP/1.1 404 Nope\tnot here\r\n"},
		{299, "caf\xe9", "HTTP/1.1 299 caf\xe9\r\n"}, // obs-text
		{200, "OK\r\nX-Injected: 1", ""},
		{200, "OK\n", ""},
		{200, "O\x00K", ""},
		{200, "O\x7fK", ""},
		{99, "Low", ""},
		{1000, "High", ""},
	}
	for _, tt := range tests {
		got, err := AppendStatusLineReason([]byte("x"), tt.status, []byte(tt.reason))
		if tt.want == "" {
			if err == nil || string(got) != "x" {
				t.Errorf("(%d, %q): got %q, %v; want refusal with nothing appended", tt.status, tt.reason, got, err)
			}
			continue
		}
		if err != nil || string(got) != "x"+tt.want {
			t.Errorf("(%d, %q) = %q, %v; want %q", tt.status, tt.reason, got, err, tt.want)
		}
	}
}

func TestAppendStatusLineAllocs(t *testing.T) {
	buf := make([]byte, 0, 128)
	codes := []int{200, 404, 599, 799}
	allocs := testing.AllocsPerRun(100, func() {
		for _, code := range codes {
			buf = AppendStatusLine(buf[:0], code)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendStatusLine allocates %v times per run", allocs)
	}
	if string(buf) != "HTTP/1.1 799 \r\n" {
		t.Errorf("last line %q", buf)
	}
}

func BenchmarkEncodeStatusLine(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := 0; b.Loop(); i++ {
		buf = AppendStatusLine(buf[:0], 200+i%2*204)
	}
}
