package http1

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseDifferential feeds the same bytes to this parser and to
// net/http.ReadRequest. Refusing what the other accepts is safe; what
// could smuggle is two parsers that both accept a head but frame its body
// differently, or one that accepts a head the other refuses for a framing
// reason. Deliberate differences, all of them refusals on our side or
// checks net/http leaves to its server:
//
//	| input                                   | here          | net/http.ReadRequest        |
//	|-----------------------------------------|---------------|-----------------------------|
//	| HTTP/1.1 without Host                   | 400           | accepted (its server: 400)  |
//	| bare LF and CRLF mixed in one head      | 400           | accepted                    |
//	| Transfer-Encoding other than chunked    | 400 / 501     | accepted or refused         |
//	| Expect other than 100-continue          | 417           | accepted (its server: 417)  |
//	| asterisk-form outside OPTIONS, fragment | 400           | accepted                    |
//	| invalid percent-escape in the target    | accepted      | refused (URL parse); the    |
//	|                                         | (400 on decode)| bridge's DecodePath refuses |
//	| HTTP/1.x with x > 1                     | served as 1.1 | accepted                    |
func FuzzParseDifferential(f *testing.F) {
	for _, seed := range splitHeads {
		f.Add([]byte(seed))
	}
	f.Add([]byte(browserGet))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Parser
		var r Request
		_, ourErr := p.Parse(data, &r)
		if ourErr == ErrIncomplete {
			return
		}
		theirs, theirErr := http.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
		if ourErr != nil {
			return // a refusal never smuggles
		}
		if theirErr != nil {
			if framingError(theirErr.Error()) {
				t.Fatalf("accepted a head net/http refuses for its framing (%v):\n%q", theirErr, data)
			}
			return
		}
		// Both accepted: the body must be framed the same way.
		theirChunked := len(theirs.TransferEncoding) > 0 && theirs.TransferEncoding[len(theirs.TransferEncoding)-1] == "chunked"
		if r.Chunked != theirChunked {
			t.Fatalf("chunked %v, net/http %v:\n%q", r.Chunked, theirChunked, data)
		}
		if !r.Chunked {
			ours := max(r.ContentLength, 0)
			if theirs.ContentLength != ours {
				t.Fatalf("Content-Length %d, net/http %d:\n%q", ours, theirs.ContentLength, data)
			}
		}
		// And hold the same fields. net/http moves Host and
		// Transfer-Encoding out of its map and folds repeated equal
		// Content-Lengths into one, so those three are left out.
		theirCount := 0
		for name, values := range theirs.Header {
			if name != "Content-Length" {
				theirCount += len(values)
			}
		}
		ourCount := 0
		for _, f := range r.Header.Fields() {
			switch f.Known {
			case HeaderHost, HeaderTransferEncoding, HeaderContentLength:
			default:
				ourCount++
			}
		}
		if ourCount != theirCount {
			t.Fatalf("%d fields, net/http %d:\n%q", ourCount, theirCount, data)
		}
	})
}

func framingError(msg string) bool {
	for _, word := range []string{"Content-Length", "Transfer-Encoding", "chunked", "header"} {
		if strings.Contains(msg, word) {
			return true
		}
	}
	return false
}

// TestFuzzSeedCorpusPresent keeps the committed seed corpus from being
// lost: `make fuzz` starts from it.
func TestFuzzSeedCorpusPresent(t *testing.T) {
	for _, target := range []string{"FuzzParseDifferential"} {
		entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", target))
		if err != nil || len(entries) == 0 {
			t.Errorf("no committed seed corpus for %s: %v", target, err)
		}
	}
}
