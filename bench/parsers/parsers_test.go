// Package parsers times request-head parsing of http1, fasthttp and
// net/http on the same bytes in one run (`make bench-parsers`), so the
// figures are ratios taken side by side. It is its own module so that the
// main module does not depend on fasthttp.
package parsers

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/m0serve/m0serve/http1"
	"github.com/valyala/fasthttp"
)

var heads = []string{"1-field", "browser-12", "40-field"}

func readHead(b *testing.B, name string) []byte {
	data, err := os.ReadFile(filepath.Join("..", "..", "http1", "testdata", "heads", name+".http"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkHTTP1(b *testing.B) {
	for _, name := range heads {
		b.Run(name, func(b *testing.B) {
			head := readHead(b, name)
			var p http1.Parser
			var r http1.Request
			b.SetBytes(int64(len(head)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Parse(head, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFasthttp(b *testing.B) {
	for _, name := range heads {
		b.Run(name, func(b *testing.B) {
			head := readHead(b, name)
			src := bytes.NewReader(head)
			br := bufio.NewReaderSize(src, 16<<10)
			var h fasthttp.RequestHeader
			b.SetBytes(int64(len(head)))
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(head)
				br.Reset(src)
				h.Reset()
				if err := h.Read(br); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNetHTTP(b *testing.B) {
	for _, name := range heads {
		b.Run(name, func(b *testing.B) {
			head := readHead(b, name)
			src := bytes.NewReader(head)
			br := bufio.NewReaderSize(src, 16<<10)
			b.SetBytes(int64(len(head)))
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(head)
				br.Reset(src)
				if _, err := http.ReadRequest(br); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
