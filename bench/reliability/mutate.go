package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// baseRequests are valid requests the mutator starts from, beside the
// corpora under http1/testdata. None is HEAD: the response validator
// expects every response to carry the body its framing announces.
var baseRequests = []string{
	"GET / HTTP/1.1\r\nHost: bench\r\n\r\n",
	"GET /a/b?c=d&e=%20f HTTP/1.1\r\nHost: bench:8000\r\nUser-Agent: m0\r\nAccept: */*\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.0\r\n\r\n",
	"GET http://bench/x HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n",
	"POST /upload HTTP/1.1\r\nHost: bench\r\nContent-Length: 5\r\n\r\nhello",
	"POST /upload HTTP/1.1\r\nHost: bench\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"POST /upload HTTP/1.1\r\nHost: bench\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc",
	"PUT /x HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
	"OPTIONS * HTTP/1.1\r\nHost: bench\r\n\r\n",
	"DELETE /x HTTP/1.1\r\nHost: bench\r\nCookie: a=b; c=d\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: bench\r\n\r\nGET /2 HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n",
}

// tokens are pieces of HTTP that framing and smuggling bugs are made of;
// the mutator inserts and substitutes them.
var tokens = []string{
	"\r\n", "\n", "\r", " ", "\t", ":", "\x00", "\xff", "%00", "%", "/", "?", "#", "..",
	"\r\n\r\n", "Content-Length: 0\r\n", "Content-Length: 10\r\n", "Content-Length: -1\r\n",
	"Content-Length: 99999999999999999999\r\n", "Transfer-Encoding: chunked\r\n",
	"Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding: chunked, identity\r\n",
	"0\r\n\r\n", "ffffffffffffffff\r\n", "1;ext=\"x\"\r\na\r\n", "Expect: 100-continue\r\n",
	"Connection: close\r\n", "Connection: keep-alive\r\n", "Connection: upgrade\r\nUpgrade: websocket\r\n",
	"Host: \r\n", "Host: a b\r\n", " folded\r\n", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.10",
	"GET ", "POST ", "CONNECT ", "TRACE ", "http://x", "[::1]", "\xc3\xa9",
}

// Mutator makes malformed variants of valid requests: byte flips,
// insertions, deletions, duplications, tokens, splices of two seeds.
type Mutator struct {
	seeds [][]byte
	rng   *rand.Rand
}

// newMutator seeds a mutator with baseRequests and the request corpora
// under root/http1/testdata (the gunicorn corpus, valid and invalid, and
// the parser fuzz corpus), skipping any request that names HEAD.
func newMutator(root string, seed uint64) (*Mutator, error) {
	m := &Mutator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for _, r := range baseRequests {
		m.seeds = append(m.seeds, []byte(r))
	}
	gunicorn, _ := filepath.Glob(filepath.Join(root, "http1/testdata/gunicorn/*/*.http"))
	for _, path := range gunicorn {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		m.add(decodeGunicorn(data))
	}
	fuzz, _ := filepath.Glob(filepath.Join(root, "http1/testdata/fuzz/FuzzParseDifferential/*"))
	for _, path := range fuzz {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if b, ok := decodeGoFuzz(data); ok {
			m.add(b)
		}
	}
	if len(m.seeds) == len(baseRequests) {
		return nil, fmt.Errorf("no request corpus under %s/http1/testdata", root)
	}
	return m, nil
}

func (m *Mutator) add(b []byte) {
	if len(b) > 0 && !bytes.Contains(b, []byte("HEAD")) {
		m.seeds = append(m.seeds, b)
	}
}

// Seeds is how many requests the mutator starts from.
func (m *Mutator) Seeds() int { return len(m.seeds) }

// Next is a new request: a seed with one to four mutations, or (one time
// in eight) a seed unchanged.
func (m *Mutator) Next() []byte {
	b := append([]byte(nil), m.seeds[m.rng.IntN(len(m.seeds))]...)
	if m.rng.IntN(8) == 0 {
		return b
	}
	for n := 1 + m.rng.IntN(4); n > 0; n-- {
		b = m.mutate(b)
	}
	if len(b) > 64<<10 {
		b = b[:64<<10]
	}
	return b
}

func (m *Mutator) mutate(b []byte) []byte {
	at := func() int { return m.rng.IntN(len(b) + 1) }
	switch m.rng.IntN(8) {
	case 0: // flip bits of a byte
		if len(b) > 0 {
			b[m.rng.IntN(len(b))] ^= byte(1 << m.rng.IntN(8))
		}
	case 1: // a random byte inserted
		i := at()
		b = append(b[:i], append([]byte{byte(m.rng.IntN(256))}, b[i:]...)...)
	case 2: // a range deleted
		if len(b) > 0 {
			i := m.rng.IntN(len(b))
			j := i + 1 + m.rng.IntN(min(16, len(b)-i))
			b = append(b[:i], b[j:]...)
		}
	case 3: // a range duplicated
		if len(b) > 0 {
			i := m.rng.IntN(len(b))
			j := i + 1 + m.rng.IntN(min(64, len(b)-i))
			b = append(b[:j], append(append([]byte(nil), b[i:j]...), b[j:]...)...)
		}
	case 4, 5: // a token inserted, or put over the bytes at that place
		tok := tokens[m.rng.IntN(len(tokens))]
		i := at()
		rest := b[i:]
		if m.rng.IntN(2) == 0 && len(rest) > len(tok) {
			rest = rest[len(tok):]
		}
		b = append(b[:i], append([]byte(tok), rest...)...)
	case 6: // cut short, or the end of another seed spliced on
		other := m.seeds[m.rng.IntN(len(m.seeds))]
		b = append(b[:at()], other[m.rng.IntN(len(other)+1):]...)
	case 7: // a long run of one byte (limits: head size, field size)
		i := at()
		run := bytes.Repeat([]byte{"a \t:\r0"[m.rng.IntN(6)]}, 1+m.rng.IntN(10000))
		b = append(b[:i], append(run, b[i:]...)...)
	}
	return b
}

var hexEscape = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)

// decodeGunicorn turns a gunicorn corpus file into wire bytes
// (http1/testdata/gunicorn/FORMAT.md): line breaks dropped, then the
// escapes \r\n, \0, \n, \t and \xHH.
func decodeGunicorn(data []byte) []byte {
	s := strings.ReplaceAll(string(data), "\n", "")
	s = strings.ReplaceAll(s, `\r\n`, "\r\n")
	s = strings.ReplaceAll(s, `\0`, "\x00")
	s = strings.ReplaceAll(s, `\n`, "\n")
	s = strings.ReplaceAll(s, `\t`, "\t")
	s = hexEscape.ReplaceAllStringFunc(s, func(e string) string {
		n, _ := strconv.ParseUint(e[2:], 16, 8)
		return string([]byte{byte(n)})
	})
	return []byte(s)
}

// decodeGoFuzz reads a one-value Go fuzz corpus file ("go test fuzz v1"
// then []byte("...") or string("...")).
func decodeGoFuzz(data []byte) ([]byte, bool) {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, false
	}
	v := lines[1]
	for _, prefix := range []string{"[]byte(", "string("} {
		if inner, ok := strings.CutPrefix(v, prefix); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(inner, ")"))
			return []byte(s), err == nil
		}
	}
	return nil, false
}
