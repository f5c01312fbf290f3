package http1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAppendField(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // "" means refused
	}{
		{"Content-Type", "text/plain", "Content-Type: text/plain\r\n"},
		{"X-Empty", "", "X-Empty: \r\n"},
		{"x", "a\tb c", "x: a\tb c\r\n"},
		{"!#$%&'*+-.^_`|~09AZaz", "v", "!#$%&'*+-.^_`|~09AZaz: v\r\n"},
		{"X-Latin1", "caf\xe9", "X-Latin1: caf\xe9\r\n"},   // obs-text
		{"X-Trim", " \t padded \t ", "X-Trim: padded\r\n"}, // OWS is not part of the value
		{"X-Only-Space", " \t ", "X-Only-Space: \r\n"},     //
		{"", "v", ""},                          // empty name
		{"X Name", "v", ""},                    // SP in name
		{"X-Name:", "v", ""},                   // colon in name
		{"X(Name)", "v", ""},                   // delimiters
		{"X-Caf\xe9", "v", ""},                 // non-ASCII name
		{"X-Inject", "a\r\nSet-Cookie: x", ""}, // header injection
		{"X-Inject", "a\nb", ""},               //
		{"X-Inject", "a\rb", ""},               //
		{"X-Nul", "a\x00b", ""},                //
		{"X-Del", "a\x7fb", ""},                //
		{"X-Ctl", "\x01", ""},                  //
		{"X-End", "a\r\n", ""},                 // trailing CRLF is not OWS
		{"X-Split\r\nX-Evil", "v", ""},         // injection through the name
	}
	for _, tt := range tests {
		for _, viaString := range []bool{false, true} {
			var got []byte
			var err error
			if viaString {
				got, err = AppendFieldString([]byte("HTTP/1.1 200 OK\r\n"), tt.name, tt.value)
			} else {
				got, err = AppendField([]byte("HTTP/1.1 200 OK\r\n"), []byte(tt.name), []byte(tt.value))
			}
			got = bytes.TrimPrefix(got, []byte("HTTP/1.1 200 OK\r\n"))
			if tt.want == "" {
				if err == nil || len(got) != 0 {
					t.Errorf("(%q, %q) string=%v: got %q, %v; want refusal, nothing appended", tt.name, tt.value, viaString, got, err)
				}
				continue
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("(%q, %q) string=%v: got %q, %v; want %q", tt.name, tt.value, viaString, got, err, tt.want)
			}
		}
	}
}

// The sweeps cross the SWAR scanner's eight-byte blocks in every alignment:
// each length accepted whole, and refused with a bad byte at each place.
func TestAppendFieldNameSweep(t *testing.T) {
	buf := make([]byte, 0, 512)
	for n := 1; n <= 140; n++ {
		name := []byte(strings.Repeat("aZ9-_", 30)[:n])
		var err error
		buf, err = AppendField(buf[:0], name, []byte("v"))
		if err != nil || string(buf) != string(name)+": v\r\n" {
			t.Fatalf("name length %d: got %q, %v", n, buf, err)
		}
		for _, bad := range []byte{' ', ':', '\t', '\r', '\n', 0, '"', '(', '@', 0x7F, 0x80, 0xFF} {
			for p := 0; p < n; p++ {
				name[p] = bad
				buf, err = AppendField(buf[:0], name, []byte("v"))
				if err == nil || len(buf) != 0 {
					t.Fatalf("name length %d with %#x at %d: accepted as %q", n, bad, p, buf)
				}
				name[p] = "aZ9-_"[p%5]
			}
		}
	}
}

func TestAppendFieldValueSweep(t *testing.T) {
	const fill = "ab c\t\xe9!~"
	buf := make([]byte, 0, 512)
	for n := 1; n <= 140; n++ {
		value := []byte(strings.Repeat(fill, 20)[:n])
		value[0], value[n-1] = 'x', 'y'
		var err error
		buf, err = AppendField(buf[:0], []byte("X"), value)
		if err != nil || string(buf) != "X: "+string(value)+"\r\n" {
			t.Fatalf("value length %d: got %q, %v", n, buf, err)
		}
		for _, bad := range []byte{'\r', '\n', 0, 0x01, 0x0B, 0x1F, 0x7F} {
			for p := 0; p < n; p++ {
				saved := value[p]
				value[p] = bad
				buf, err = AppendField(buf[:0], []byte("X"), value)
				if err == nil || len(buf) != 0 {
					t.Fatalf("value length %d with %#x at %d: accepted as %q", n, bad, p, buf)
				}
				value[p] = saved
			}
		}
	}
}

// fixedDate is a cache holding a known second, so heads compare exactly.
func fixedDate() *DateCache {
	return NewDateCache(time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC))
}

const dateLine = "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"

func TestAppendFraming(t *testing.T) {
	tests := []struct {
		name string
		head ResponseHead
		want string
		mode BodyMode
	}{
		{"length", ResponseHead{Status: 200, Version: Version11, ContentLength: 5},
			"Content-Length: 5\r\n" + dateLine + "\r\n", BodyLength},
		{"zero length", ResponseHead{Status: 200, Version: Version11, ContentLength: 0},
			"Content-Length: 0\r\n" + dateLine + "\r\n", BodyNone},
		{"unknown length 1.1", ResponseHead{Status: 200, Version: Version11, ContentLength: -1},
			"Transfer-Encoding: chunked\r\n" + dateLine + "\r\n", BodyChunked},
		{"unknown length 1.0 keep-alive asked", ResponseHead{Status: 200, Version: Version10, ContentLength: -1, KeepAlive10: true},
			"Connection: close\r\n" + dateLine + "\r\n", BodyUntilClose},
		{"unknown length 1.0", ResponseHead{Status: 200, Version: Version10, ContentLength: -1},
			"Connection: close\r\n" + dateLine + "\r\n", BodyUntilClose},
		{"1.0 keep-alive", ResponseHead{Status: 200, Version: Version10, ContentLength: 2, KeepAlive10: true},
			"Content-Length: 2\r\nConnection: keep-alive\r\n" + dateLine + "\r\n", BodyLength},
		{"1.0 keep-alive but closing", ResponseHead{Status: 200, Version: Version10, ContentLength: 2, KeepAlive10: true, Close: true},
			"Content-Length: 2\r\nConnection: close\r\n" + dateLine + "\r\n", BodyLength},
		{"1.0 no keep-alive", ResponseHead{Status: 200, Version: Version10, ContentLength: 2},
			"Content-Length: 2\r\nConnection: close\r\n" + dateLine + "\r\n", BodyLength},
		{"close", ResponseHead{Status: 200, Version: Version11, ContentLength: 2, Close: true},
			"Content-Length: 2\r\nConnection: close\r\n" + dateLine + "\r\n", BodyLength},
		{"HEAD known length", ResponseHead{Status: 200, Version: Version11, ContentLength: 1234, HeadRequest: true},
			"Content-Length: 1234\r\n" + dateLine + "\r\n", BodyNone},
		{"HEAD unknown length", ResponseHead{Status: 200, Version: Version11, ContentLength: -1, HeadRequest: true},
			dateLine + "\r\n", BodyNone},
		{"HEAD unknown length 1.0 keep-alive", ResponseHead{Status: 200, Version: Version10, ContentLength: -1, HeadRequest: true, KeepAlive10: true},
			"Connection: keep-alive\r\n" + dateLine + "\r\n", BodyNone},
		{"204", ResponseHead{Status: 204, Version: Version11, ContentLength: 10},
			dateLine + "\r\n", BodyNone},
		{"304", ResponseHead{Status: 304, Version: Version11, ContentLength: -1},
			dateLine + "\r\n", BodyNone},
		{"100", ResponseHead{Status: 100, Version: Version11, ContentLength: -1, Close: true},
			dateLine + "\r\n", BodyNone},
		{"101", ResponseHead{Status: 101, Version: Version11, ContentLength: 0},
			dateLine + "\r\n", BodyNone},
		{"103 to 1.0", ResponseHead{Status: 103, Version: Version10, ContentLength: -1},
			dateLine + "\r\n", BodyNone},
		{"204 closing", ResponseHead{Status: 204, Version: Version11, ContentLength: -1, Close: true},
			"Connection: close\r\n" + dateLine + "\r\n", BodyNone},
		{"server", ResponseHead{Status: 404, Version: Version11, ContentLength: 9, Server: []byte("m0serve")},
			"Content-Length: 9\r\n" + dateLine + "Server: m0serve\r\n\r\n", BodyLength},
		{"invalid server dropped", ResponseHead{Status: 404, Version: Version11, ContentLength: 9, Server: []byte("m0\r\nX: y")},
			"Content-Length: 9\r\n" + dateLine + "\r\n", BodyLength},
		{"out-of-range status framed as 500", ResponseHead{Status: 42, Version: Version11, ContentLength: -1},
			"Transfer-Encoding: chunked\r\n" + dateLine + "\r\n", BodyChunked},
	}
	for _, tt := range tests {
		got, mode := AppendFraming([]byte("prefix"), &tt.head, fixedDate())
		if string(got) != "prefix"+tt.want || mode != tt.mode {
			t.Errorf("%s: got %q, %v; want %q, %v", tt.name, got, mode, tt.want, tt.mode)
		}
	}
	got, _ := AppendFraming(nil, &ResponseHead{Status: 200, ContentLength: 1}, nil)
	if string(got) != "Content-Length: 1\r\n\r\n" {
		t.Errorf("nil date cache: got %q", got)
	}
}

// Every combination is read back by net/http's client, an independent
// parser, which must find the framing and connection AppendFraming chose.
func TestAppendFramingReadByNetHTTP(t *testing.T) {
	body := []byte("hello, body")
	for _, status := range []int{100, 101, 200, 204, 206, 304, 404, 500, 599} {
		for _, version := range []Version{Version10, Version11} {
			for _, length := range []int64{-1, 0, int64(len(body))} {
				for flags := range 8 {
					h := ResponseHead{Status: status, Version: version, ContentLength: length,
						Close: flags&1 != 0, KeepAlive10: flags&2 != 0, HeadRequest: flags&4 != 0}
					checkReadBack(t, &h, body)
				}
			}
		}
	}
}

func checkReadBack(t *testing.T, h *ResponseHead, body []byte) {
	t.Helper()
	wire := AppendStatusLine(nil, h.Status)
	wire, mode := AppendFraming(wire, h, fixedDate())
	switch mode {
	case BodyLength:
		wire = append(wire, body[:h.ContentLength]...)
	case BodyChunked:
		wire = AppendChunk(wire, body[:3])
		wire = AppendChunk(wire, body[3:])
		wire, _ = AppendLastChunk(wire)
	case BodyUntilClose:
		wire = append(wire, body...)
	}
	wire = append(wire, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"...)
	method := "GET"
	if h.HeadRequest {
		method = "HEAD"
	}
	req := &http.Request{Method: method, ProtoMajor: 1, ProtoMinor: int(h.Version % 10)}
	r := bufio.NewReader(bytes.NewReader(wire))
	resp, err := http.ReadResponse(r, req)
	if err != nil {
		t.Fatalf("%+v: net/http refuses %q: %v", h, wire, err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%+v: body: %v", h, err)
	}
	var want []byte
	switch mode {
	case BodyLength:
		want = body[:h.ContentLength]
	case BodyChunked, BodyUntilClose:
		want = body
	}
	if mode == BodyUntilClose {
		want = append(want, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"...)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%+v (mode %v): net/http read body %q, want %q", h, mode, got, want)
	}
	if resp.Close != h.Closes() && resp.StatusCode >= 200 {
		t.Errorf("%+v: net/http says close=%v, Closes()=%v", h, resp.Close, h.Closes())
	}
	if mode == BodyUntilClose || resp.StatusCode < 200 || h.Closes() {
		return
	}
	// The next response on the connection must start where this one ended.
	next, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("%+v: next response unreadable: %v", h, err)
	}
	if b, _ := io.ReadAll(next.Body); string(b) != "next" {
		t.Errorf("%+v: next response body %q", h, b)
	}
}

func TestClosesMatchesConnectionField(t *testing.T) {
	for _, status := range []int{100, 200, 204} {
		for _, version := range []Version{Version10, Version11} {
			for _, length := range []int64{-1, 3} {
				for flags := range 8 {
					h := ResponseHead{Status: status, Version: version, ContentLength: length,
						Close: flags&1 != 0, KeepAlive10: flags&2 != 0, HeadRequest: flags&4 != 0}
					got, _ := AppendFraming(nil, &h, nil)
					wrote := bytes.Contains(got, []byte("Connection: close\r\n"))
					if wrote != h.Closes() {
						t.Errorf("%+v: wrote close=%v, Closes()=%v: %q", h, wrote, h.Closes(), got)
					}
				}
			}
		}
	}
}

var (
	benchContentType = []byte("Content-Type")
	benchTextPlain   = []byte("text/plain; charset=utf-8")
	benchCacheName   = []byte("Cache-Control")
	benchCacheValue  = []byte("no-cache")
	benchVaryName    = []byte("Vary")
	benchVaryValue   = []byte("Accept-Encoding")
	benchIDName      = []byte("X-Request-Id")
	benchIDValue     = []byte("f3a1c2d4-0b9e-4c51-8a6f-2e7d9c0b1a34")
)

// encodeBenchResponse writes a head as the loop does: the status line,
// the app's fields, then the framing.
func encodeBenchResponse(buf []byte, h *ResponseHead, date *DateCache) ([]byte, BodyMode, error) {
	buf = AppendStatusLine(buf[:0], h.Status)
	for _, f := range [...]FieldLine{
		{benchContentType, benchTextPlain},
		{benchCacheName, benchCacheValue},
		{benchVaryName, benchVaryValue},
		{benchIDName, benchIDValue},
	} {
		var err error
		if buf, err = AppendField(buf, f.Name, f.Value); err != nil {
			return buf, BodyNone, err
		}
	}
	buf, mode := AppendFraming(buf, h, date)
	return buf, mode, nil
}

func TestEncodeResponseAllocs(t *testing.T) {
	date := NewDateCache(time.Now())
	h := ResponseHead{Status: 200, Version: Version11, ContentLength: 13, Server: []byte("m0serve")}
	buf := make([]byte, 0, 1024)
	var err error
	allocs := testing.AllocsPerRun(1000, func() {
		buf, _, err = encodeBenchResponse(buf, &h, date)
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("encoding a 4-field response allocates %v times", allocs)
	}
	// The separate calls the loop may make instead allocate nothing
	// either, strings included.
	allocs = testing.AllocsPerRun(1000, func() {
		buf = AppendStatusLine(buf[:0], 404)
		buf, _ = AppendFieldString(buf, "Content-Type", "text/html; charset=utf-8 and a value longer than thirty-two bytes")
		buf, _ = AppendFraming(buf, &h, date)
	})
	if allocs != 0 {
		t.Errorf("status line + string field + framing allocates %v times", allocs)
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	date := NewDateCache(time.Now())
	h := ResponseHead{Status: 200, Version: Version11, ContentLength: 13, Server: []byte("m0serve")}
	buf := make([]byte, 0, 1024)
	buf, _, _ = encodeBenchResponse(buf, &h, date)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf, _, _ = encodeBenchResponse(buf, &h, date)
	}
}

func ExampleAppendFraming() {
	date := NewDateCache(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	h := ResponseHead{Status: 200, Version: Version11, ContentLength: -1}
	buf := AppendStatusLine(nil, h.Status)
	buf, _ = AppendFieldString(buf, "Content-Type", "text/plain")
	buf, mode := AppendFraming(buf, &h, date)
	if mode == BodyChunked {
		buf = AppendChunk(buf, []byte("hello"))
		buf, _ = AppendLastChunk(buf)
	}
	fmt.Printf("%q\n", buf)
	// Output:
	// "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nDate: Mon, 30 Nov 2026 09:00:00 GMT\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
}

// AppendFieldSpan's span is the field as AppendField wrote it (the value
// trimmed); a refused field adds neither text nor span.
func TestAppendFieldSpan(t *testing.T) {
	text, spans, err := AppendFieldSpanString([]byte("X: y\r\n"), nil, "Content-Type", "  text/plain \t")
	if err != nil || len(spans) != 1 {
		t.Fatalf("%v %v", spans, err)
	}
	if name, value := spans[0].Name(text), spans[0].Value(text); string(name) != "Content-Type" || string(value) != "text/plain" {
		t.Fatalf("name %q value %q in %q", name, value, text)
	}
	for _, f := range [][2]string{{"X-A", "a\r\nb: c"}, {":status", "200"}, {"", "v"}, {"X", "a\x00"}} {
		if out, s, err := AppendFieldSpanString(text, spans, f[0], f[1]); err == nil || len(out) != len(text) || len(s) != 1 {
			t.Errorf("%q: %v, %d spans, %q", f, err, len(s), out)
		}
	}
}
