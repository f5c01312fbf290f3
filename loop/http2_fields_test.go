package loop

import (
	"io"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/http1"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Blocks is each header block the server sent on stream id, its fields
// in order and every one kept (a map would hide a repeated field).
func h2Blocks(t *testing.T, out string, id uint32) [][]hpack.HeaderField {
	t.Helper()
	fr := http2.NewFramer(nil, strings.NewReader(out))
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = 1 << 20
	var blocks [][]hpack.HeaderField
	for {
		f, err := fr.ReadFrame()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return blocks
		}
		if err != nil {
			t.Fatalf("the server's frames: %v", err)
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok && h.StreamID == id {
			blocks = append(blocks, h.Fields)
		}
	}
}

// A Go handler's response fields reach the client as set, each one field:
// names in lower case (RFC 9113 §8.2.1), connection-specific ones dropped
// (§8.2.2, TE too: it is a request's), and one content-length, the
// loop's, when the loop frames the body. Its trailers likewise.
func TestHTTP2ResponseFields(t *testing.T) {
	work := func(j *Job) {
		for _, f := range [][2]string{
			{"X-Upper-Case", "v"}, {"TE", "trailers"}, {"Keep-Alive", "timeout=5"}, {"Upgrade", "h2c"},
			{"Proxy-Connection", "close"}, {"Content-Length", "99"}, {"X-Trim", "  a b  "}, {"Set-Cookie", "a=1"},
			{"Set-Cookie", "b=2"},
		} {
			if err := j.SetHeader(f[0], f[1]); err != nil {
				t.Errorf("SetHeader %q: %v", f, err)
			}
		}
		for _, f := range [][2]string{{"X-A", "a\r\nx-injected: yes"}, {":status", "200"}, {"x:y", "z"}, {"X-N", "a\x00b"}} {
			if err := j.SetHeader(f[0], f[1]); err == nil {
				t.Errorf("SetHeader %q was taken", f)
			}
		}
		j.SetTrailer("X-Checksum", "abc")
		j.WriteHeader(200, -1)
		j.Write([]byte("abc"))
		j.Finish()
	}
	deferredHarness(t, deferEverything, work, func(c *Config) {
		h2Config(c)
		c.Headers = []http1.FieldLine{{Name: []byte("X-Default"), Value: []byte("d")}}
	})(func(t *testing.T, hs *harness) {
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "GET", "/", true))
		hs.h2Ended(c, 1)
		blocks := h2Blocks(t, hs.fb.output(c), 1)
		if len(blocks) != 2 {
			t.Fatalf("%d header blocks, want the head and the trailers: %v", len(blocks), blocks)
		}
		var got []string
		for _, f := range blocks[0] {
			if f.Name != "date" {
				got = append(got, f.Name+"="+f.Value)
			}
		}
		want := "[:status=200 x-upper-case=v x-trim=a b set-cookie=a=1 set-cookie=b=2 x-default=d server=test]"
		if s := "[" + strings.Join(got, " ") + "]"; s != want {
			t.Errorf("head %s\nwant %s", s, want)
		}
		if len(blocks[1]) != 1 || blocks[1][0].Name != "x-checksum" || blocks[1][0].Value != "abc" {
			t.Errorf("trailers %v", blocks[1])
		}
	})
}

// With a known length the loop's content-length is the one sent, the
// handler's dropped: two would make the response malformed (§8.1.1).
func TestHTTP2ResponseOneContentLength(t *testing.T) {
	work := func(j *Job) {
		j.SetHeader("Content-Length", "99")
		j.WriteHeader(200, 3)
		j.Write([]byte("abc"))
		j.Finish()
	}
	deferredHarness(t, deferEverything, work, h2Config)(func(t *testing.T, hs *harness) {
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "GET", "/", true))
		if s := hs.h2Ended(c, 1); string(s.body) != "abc" {
			t.Fatalf("body %q", s.body)
		}
		var lengths []string
		for _, f := range h2Blocks(t, hs.fb.output(c), 1)[0] {
			if f.Name == "content-length" {
				lengths = append(lengths, f.Value)
			}
		}
		if len(lengths) != 1 || lengths[0] != "3" {
			t.Fatalf("content-length %q, want the loop's one", lengths)
		}
	})
}

// BenchmarkHTTP2ResponseFields is the field list of a typical response's
// HTTP/2 head: a handler's fields, a Config default, the framing, Date
// and Server. It must not allocate.
func BenchmarkHTTP2ResponseFields(b *testing.B) {
	hs := newHarness(b, plainHello, func(c *Config) {
		h2Config(c)
		c.Headers = []http1.FieldLine{{Name: []byte("X-Frame-Options"), Value: []byte("DENY")}}
	})
	w := &ResponseWriter{loop: hs.l}
	for _, f := range [][2]string{
		{"Content-Type", "application/json"}, {"Cache-Control", "no-store"},
		{"Set-Cookie", "session=4f2a9c; Path=/; HttpOnly"}, {"X-Request-Id", "7b0c1f6e"},
	} {
		w.AddHeader(f[0], f[1])
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		head := http1.ResponseHead{Status: 200, Version: http1.Version11, ContentLength: 1234}
		if list, _ := hs.l.streamFields(w.fields, w.spans, w.fieldsSet, &head); len(list) != 8 {
			b.Fatalf("%d fields: %v", len(list), list)
		}
	}
}

// FuzzHTTP2ResponseFields: whatever a handler tries to set, each field
// it was allowed to set is one field of the list, named in lower case
// by a token (never a pseudo-header), its value free of CR, LF and NUL;
// a refused one leaves nothing.
func FuzzHTTP2ResponseFields(f *testing.F) {
	for _, seed := range [][2]string{
		{"X-A", "v"}, {"X-A", "a\r\nx-injected: yes"}, {":status", "200"}, {"X-A\r\nB", "c"},
		{"Content-Length", "9"}, {"TE", "trailers"}, {"Date", "x"}, {"SERVER", "y"}, {"x", " \tv\t "}, {"X\x00", "v"}, {"x", "a\x00b"},
	} {
		f.Add(seed[0], seed[1], "X-B", "w")
	}
	hs := newHarness(f, plainHello, h2Config)
	f.Fuzz(func(t *testing.T, name1, value1, name2, value2 string) {
		w := &ResponseWriter{loop: hs.l}
		set := 0
		for _, field := range [][2]string{{name1, value1}, {name2, value2}} {
			if w.AddHeader(field[0], field[1]) == nil {
				lower := strings.ToLower(field[0])
				if !connectionSpecific([]byte(lower)) && lower != "content-length" {
					set++
				}
			}
		}
		head := http1.ResponseHead{Status: 200, Version: http1.Version11, ContentLength: 1}
		list, _ := hs.l.streamFields(w.fields, w.spans, w.fieldsSet, &head)
		// Then the loop's content-length, and its date and server unless
		// the handler set its own.
		loops := 1
		if w.fieldsSet&dateBit == 0 {
			loops++
		}
		if w.fieldsSet&serverBit == 0 {
			loops++
		}
		if len(list) != set+loops {
			t.Fatalf("%d fields for %d set: %v", len(list), set, list)
		}
		for _, hf := range list {
			if !http1.ValidFieldName([]byte(hf.Name)) || strings.ToLower(hf.Name) != hf.Name ||
				strings.ContainsAny(hf.Value, "\r\n\x00") {
				t.Fatalf("field %q in %v", hf, list)
			}
		}
	})
}
