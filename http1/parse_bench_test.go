package http1

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// The benchmark heads live in testdata/heads so that bench/parsers can
// time fasthttp on the very same bytes: a 1-field GET, what a current
// browser sends for a page (12 fields), and a 40-field API request.
var (
	oneHeaderGet    = readHead("1-field.http")
	browserGet      = readHead("browser-12.http")
	fortyHeaderPost = readHead("40-field.http")
)

func readHead(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "heads", name))
	if err != nil {
		panic(err) // a missing testdata file is a broken checkout
	}
	return string(b)
}

func TestParseAllocatesNothing(t *testing.T) {
	for name, head := range map[string]string{"1-field": oneHeaderGet, "browser": browserGet, "40-field": fortyHeaderPost} {
		buf := []byte(head)
		var p Parser
		var r Request
		if _, err := p.Parse(buf, &r); err != nil {
			t.Fatal(err)
		}
		values := make([][]byte, 0, 4)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := p.Parse(buf, &r); err != nil {
				t.Fatal(err)
			}
			if r.Header.Get("accept-encoding") == nil && name == "browser" {
				t.Fatal("lookup failed")
			}
			_ = r.Header.Get("x-not-present-anywhere-in-this-head")
			values = r.Header.Values(values[:0], "host")
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per parse", name, allocs)
		}
	}
}

func benchParse(b *testing.B, head string) {
	buf := []byte(head)
	var p Parser
	var r Request
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Parse(buf, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func benchNetHTTP(b *testing.B, head string) {
	src := bytes.NewReader([]byte(head))
	br := bufio.NewReaderSize(src, 16<<10)
	b.SetBytes(int64(len(head)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset([]byte(head))
		br.Reset(src)
		if _, err := http.ReadRequest(br); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.Run("1-field", func(b *testing.B) { benchParse(b, oneHeaderGet) })
	b.Run("browser-12", func(b *testing.B) { benchParse(b, browserGet) })
	b.Run("40-field", func(b *testing.B) { benchParse(b, fortyHeaderPost) })
}

// BenchmarkNetHTTPReadRequest is the same work done by net/http, in the
// same run, for the ratio.
func BenchmarkNetHTTPReadRequest(b *testing.B) {
	b.Run("1-field", func(b *testing.B) { benchNetHTTP(b, oneHeaderGet) })
	b.Run("browser-12", func(b *testing.B) { benchNetHTTP(b, browserGet) })
	b.Run("40-field", func(b *testing.B) { benchNetHTTP(b, fortyHeaderPost) })
}

func BenchmarkLookup(b *testing.B) {
	buf := []byte(browserGet)
	var p Parser
	var r Request
	if _, err := p.Parse(buf, &r); err != nil {
		b.Fatal(err)
	}
	b.Run("known", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r.Header.Known(HeaderCookie) == nil {
				b.Fatal("cookie")
			}
		}
	})
	b.Run("known-by-name", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r.Header.Get("Cookie") == nil {
				b.Fatal("cookie")
			}
		}
	})
	b.Run("other-present", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r.Header.Get("accept-encoding") == nil {
				b.Fatal("accept-encoding")
			}
		}
	})
	b.Run("absent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r.Header.Get("x-forwarded-for") != nil {
				b.Fatal("x-forwarded-for")
			}
		}
	})
	b.Run("net/http-absent", func(b *testing.B) {
		req, _ := http.ReadRequest(bufio.NewReader(bytes.NewReader(buf)))
		b.ReportAllocs()
		for b.Loop() {
			if req.Header.Get("x-forwarded-for") != "" {
				b.Fatal("x-forwarded-for")
			}
		}
	})
}
