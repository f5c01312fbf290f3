package http1

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
)

const oneHeaderGet = "GET / HTTP/1.1\r\nHost: localhost:8000\r\n\r\n"

// browserGet is what a current browser sends for a page: 12 fields.
const browserGet = "GET /static/css/site.css?v=20261130 HTTP/1.1\r\n" +
	"Host: www.example.com\r\n" +
	"Connection: keep-alive\r\n" +
	"sec-ch-ua: \"Chromium\";v=\"156\", \"Not)A;Brand\";v=\"24\"\r\n" +
	"sec-ch-ua-mobile: ?0\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36\r\n" +
	"sec-ch-ua-platform: \"Linux\"\r\n" +
	"Accept: text/css,*/*;q=0.1\r\n" +
	"Sec-Fetch-Site: same-origin\r\n" +
	"Sec-Fetch-Mode: no-cors\r\n" +
	"Referer: https://www.example.com/\r\n" +
	"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
	"Cookie: sessionid=0123456789abcdef; csrftoken=fedcba9876543210\r\n\r\n"

func fortyHeaderPost() string {
	var b strings.Builder
	b.WriteString("POST /api/v1/items HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\nContent-Length: 0\r\n")
	for i := 0; i < 37; i++ {
		b.WriteString("X-Custom-Header-")
		b.WriteByte(byte('a' + i%26))
		b.WriteByte(byte('a' + i/26))
		b.WriteString(": some-value-of-moderate-length-")
		b.WriteByte(byte('0' + i%10))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

func TestParseAllocatesNothing(t *testing.T) {
	for name, head := range map[string]string{"1-field": oneHeaderGet, "browser": browserGet, "40-field": fortyHeaderPost()} {
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
	b.Run("40-field", func(b *testing.B) { benchParse(b, fortyHeaderPost()) })
}

// BenchmarkNetHTTPReadRequest is the same work done by net/http, in the
// same run, for the ratio.
func BenchmarkNetHTTPReadRequest(b *testing.B) {
	b.Run("1-field", func(b *testing.B) { benchNetHTTP(b, oneHeaderGet) })
	b.Run("browser-12", func(b *testing.B) { benchNetHTTP(b, browserGet) })
	b.Run("40-field", func(b *testing.B) { benchNetHTTP(b, fortyHeaderPost()) })
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
