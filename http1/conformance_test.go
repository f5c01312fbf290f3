package http1

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The request corpora of gunicorn and llhttp (testdata/gunicorn and
// testdata/llhttp, copied from upstream; see each README.md and FORMAT.md)
// run through a model of one server connection: parse a head, read its
// body, repeat while the connection persists.

const conformanceDir = "testdata"

// served is one request as the connection model saw it.
type served struct {
	method, target, version string
	fields                  [][2]string
	body                    string
}

// outcome is how a byte stream ended: every request served, then either a
// rejection, a stream that ended mid-request, or bytes left unread because
// the connection does not persist.
type outcome struct {
	requests []served
	status   int // the rejection's status, 0 if none
	reason   string
	cutShort bool // the input ended inside a head or a body
}

func (o outcome) String() string {
	switch {
	case o.status != 0:
		return fmt.Sprintf("%d requests, then %d", len(o.requests), o.status)
	case o.cutShort:
		return fmt.Sprintf("%d requests, then end of input mid-request", len(o.requests))
	}
	return fmt.Sprintf("%d requests", len(o.requests))
}

// serveConnection feeds buf to a parser as one connection would.
func serveConnection(buf []byte) outcome {
	var out outcome
	var p Parser
	var r Request
	for off := 0; off < len(buf); {
		n, err := p.Parse(buf[off:], &r)
		if err == ErrIncomplete {
			out.cutShort = true
			return out
		}
		if err != nil {
			out.status, out.reason = err.(*Error).Status, err.(*Error).Reason
			return out
		}
		s := served{
			method:  string(r.Bytes(r.Method)),
			target:  string(r.Bytes(r.Target)),
			version: r.Version.String(),
		}
		for i := 0; i < r.Header.Len(); i++ {
			name, value := r.Header.Field(i)
			s.fields = append(s.fields, [2]string{string(name), string(value)})
		}
		off += n
		if r.MethodIs("CONNECT") {
			// A CONNECT request has no content (RFC 9110 §9.3.6): what
			// follows its head belongs to the tunnel, not to HTTP.
			out.requests = append(out.requests, s)
			return out
		}
		body, used, status, complete := readBody(buf[off:], &r)
		if status != 0 {
			out.status = status
			return out
		}
		if !complete {
			out.cutShort = true
			return out
		}
		s.body = body
		off += used
		out.requests = append(out.requests, s)
		if !r.KeepAlive || r.Upgrade {
			// The connection ends, or stops being HTTP/1.1: the bytes
			// after this request are never parsed as requests.
			return out
		}
	}
	return out
}

// readBody reads one request body from the front of in.
func readBody(in []byte, r *Request) (body string, used, status int, complete bool) {
	if !r.Chunked {
		n := r.ContentLength
		if n < 0 {
			n = 0
		}
		if int64(len(in)) < n {
			return "", 0, 0, false
		}
		return string(in[:n]), int(n), 0, true
	}
	var d ChunkedDecoder
	var b strings.Builder
	for used < len(in) {
		data, consumed, done, err := d.Decode(in[used:])
		if err != nil {
			return "", 0, err.(*Error).Status, false
		}
		b.Write(data)
		used += consumed
		if done {
			return b.String(), used, 0, true
		}
		if consumed == 0 {
			break
		}
	}
	return "", 0, 0, false
}

// decodeGunicorn turns a gunicorn .http file into wire bytes (FORMAT.md).
func decodeGunicorn(t *testing.T, data []byte) []byte {
	data = bytes.ReplaceAll(data, []byte("\n"), nil)
	data = bytes.ReplaceAll(data, []byte(`\r\n`), []byte("\r\n"))
	data = bytes.ReplaceAll(data, []byte(`\0`), []byte{0})
	data = bytes.ReplaceAll(data, []byte(`\n`), []byte("\n"))
	data = bytes.ReplaceAll(data, []byte(`\t`), []byte("\t"))
	hexEscape := regexp.MustCompile(`\\x([0-9A-Fa-f]{2})`)
	data = hexEscape.ReplaceAllFunc(data, func(m []byte) []byte {
		v, _ := strconv.ParseUint(string(m[2:]), 16, 8)
		return []byte{byte(v)}
	})
	if bytes.IndexByte(data, '\\') >= 0 {
		t.Fatalf("undecoded escape in %q", data)
	}
	return data
}

// withHost adds "Host: h" after each HTTP/1.1 request line that is not
// followed by one, for corpus files that test something else but leave out
// the Host an HTTP/1.1 request must have.
func withHost(b []byte) []byte {
	requestLine := regexp.MustCompile(`(?m)^[!-~]+ [!-~]+ HTTP/1\.1\r?\n`)
	return requestLine.ReplaceAllFunc(b, func(line []byte) []byte {
		return append(append([]byte(nil), line...), "Host: h\r\n"...)
	})
}

// gunicornPolicy is where this parser's outcome differs from gunicorn's
// own expectation, for a reason the RFC states or leaves to the server.
// want: "N" requests served, "N+STATUS" rejected after N, "cut" input
// ends mid-request, "n/a" not applicable.
var gunicornPolicy = map[string]struct{ want, why string }{
	"invalid/003c.http":                                 {"1", "-bl is a legal token (RFC 9110 §9.1); gunicorn's own method policy"},
	"invalid/006.http":                                  {"1", "a 4112-byte request line is inside our 8 KiB head limit"},
	"invalid/010.http":                                  {"1", "only under a lowered gunicorn limit"},
	"invalid/011.http":                                  {"1", "only under a lowered gunicorn limit"},
	"invalid/012.http":                                  {"1", "only under a lowered gunicorn limit"},
	"invalid/013.http":                                  {"0+400", "obs-fold is rejected (RFC 9112 §5.2) before any limit applies"},
	"invalid/019.http":                                  {"1", "X-Forwarded-* consistency is gunicorn's proxy policy, not HTTP"},
	"invalid/040.http":                                  {"1", "underscore names are legal tokens; the WSGI bridge drops them, not the parser"},
	"invalid/041.http":                                  {"1", "two Content-Type fields: RFC 9110 §5.3 binds senders, not recipients"},
	"invalid/chunked_07.http":                           {"1", "Transfer_Encoding is an ordinary field to HTTP; the bridge drops it"},
	"invalid/rfc9110_trailer_forbidden_cl_01.http":      {"1", "framing fields in trailers are ignored, not fatal (RFC 9110 §6.5.1)"},
	"invalid/rfc9110_trailer_forbidden_host_01.http":    {"1", "framing fields in trailers are ignored, not fatal (RFC 9110 §6.5.1)"},
	"invalid/rfc9110_trailer_forbidden_te_01.http":      {"1", "framing fields in trailers are ignored, not fatal (RFC 9110 §6.5.1)"},
	"invalid/pp_01.http":                                {"n/a", "PROXY protocol is not supported"},
	"invalid/pp_02.http":                                {"n/a", "PROXY protocol is not supported"},
	"invalid/pp_03.http":                                {"n/a", "PROXY protocol is not supported"},
	"valid/pp_01.http":                                  {"n/a", "PROXY protocol is not supported"},
	"valid/pp_02.http":                                  {"n/a", "PROXY protocol is not supported"},
	"valid/pp_04.http":                                  {"n/a", "PROXY protocol is not supported"},
	"valid/pp_05.http":                                  {"n/a", "PROXY protocol is not supported"},
	"valid/005.http":                                    {"0+400", "a #fragment is not part of any request-target form (RFC 9112 §3.2)"},
	"valid/009.http":                                    {"0+400", "Transfer-Encoding with Content-Length is refused (RFC 9112 §6.1)"},
	"valid/024.http":                                    {"0+431", "the head is over our 8 KiB limit (gunicorn's test raises its limits)"},
	"valid/025.http":                                    {"0+501", "gzip transfer coding is not implemented (RFC 9112 §6.1: 501)"},
	"valid/025_line.http":                               {"0+501", "gzip transfer coding is not implemented (RFC 9112 §6.1: 501)"},
	"valid/026.http":                                    {"0+431", "the head is over our 8 KiB limit (gunicorn's test raises its limits)"},
	"valid/027.http":                                    {"0+400", "raw non-ASCII bytes are not allowed in a request-target (RFC 9112 §3.2)"},
	"valid/028.http":                                    {"0+400", "whitespace before the colon MUST get 400 (RFC 9112 §5.1)"},
	"valid/029.http":                                    {"0+501", "identity is no longer a transfer coding (RFC 9112 §6.1: 501)"},
	"valid/030.http":                                    {"0+501", "identity is no longer a transfer coding (RFC 9112 §6.1: 501)"},
	"valid/rfc9112_target_absolute_userinfo_01.http":    {"0+400", "userinfo in an http URI is an error (RFC 9110 §4.2.4)"},
	"valid/099.http":                                    {"cut", "the body is shorter than its Content-Length: a server waits for the rest"},
	"valid/compat_obs_fold.http":                        {"0+400", "obs-fold is rejected (RFC 9112 §5.2)"},
	"valid/compat_obs_fold_huge.http":                   {"0+400", "obs-fold is rejected (RFC 9112 §5.2)"},
	"valid/rfc9112_smuggle_gzip_chunked_01.http":        {"0+501", "gzip transfer coding is not implemented (RFC 9112 §6.1: 501)"},
	"valid/rfc9112_smuggle_te_identity_chunked_01.http": {"0+501", "identity is no longer a transfer coding (RFC 9112 §6.1: 501)"},
}

func TestGunicornCorpus(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(conformanceDir, "gunicorn", "manifest.tsv"))
	if err != nil {
		t.Fatalf("gunicorn corpus (tests/requests of github.com/benoitc/gunicorn, kept in testdata/gunicorn) missing: %v", err)
	}
	rows := strings.Split(strings.TrimSpace(string(manifest)), "\n")[1:]
	checked := 0
	for _, row := range rows {
		cols := strings.Split(row, "\t")
		file, expect, reason, notes := cols[0], cols[1], cols[2], cols[3]
		raw, err := os.ReadFile(filepath.Join(conformanceDir, "gunicorn", file))
		if err != nil {
			t.Fatal(err)
		}
		wire := decodeGunicorn(t, raw)
		var want string
		switch policy, ok := gunicornPolicy[file]; {
		case ok:
			want = policy.want
		case strings.Contains(notes, "eof"):
			want = "cut"
		case expect == "valid":
			want = reason
		case strings.Contains(notes, "policy:limits"):
			want = "0+431"
		case strings.HasPrefix(reason, "InvalidChunk") || reason == "ChunkMissingTerminator":
			want = "0+400"
		case reason == "InvalidHTTPVersion" && strings.Contains(string(wire), "HTTP/2.0"):
			want = "0+505"
		default:
			want = "0+400"
		}
		if want == "n/a" {
			continue
		}
		checked++
		// An HTTP/1.1 request without Host gets 400 (RFC 9112 §3.2), which
		// gunicorn does not check; the rest of such a file is checked with
		// a Host added.
		got := serveConnection(wire)
		if strings.Contains(notes, "policy:no-host") && got.status < 400 {
			t.Errorf("%s without Host: %v, want a rejection", file, got)
		}
		if got.reason == errNoHost.Reason {
			got = serveConnection(withHost(wire))
		}
		if !matchesWant(got, want) {
			t.Errorf("%s (%s): %v, want %s", file, notes, got, want)
		}
	}
	if checked < 120 {
		t.Errorf("only %d corpus files checked", checked)
	}
}

func matchesWant(got outcome, want string) bool {
	switch {
	case want == "cut":
		return got.cutShort && got.status == 0
	case strings.Contains(want, "+"):
		n, status, _ := strings.Cut(want, "+")
		if status == "431" && got.status == 414 {
			status = "414" // a too-long request line is the 414 form of the limit
		}
		return strconv.Itoa(len(got.requests)) == n && strconv.Itoa(got.status) == status
	default:
		return strconv.Itoa(len(got.requests)) == want && got.status == 0 && !got.cutShort
	}
}

// TestGunicornPipelined checks the requests themselves where the corpus
// holds more than one.
func TestGunicornPipelined(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(conformanceDir, "gunicorn", "valid", "023.http"))
	if err != nil {
		t.Fatal(err)
	}
	got := serveConnection(withHost(decodeGunicorn(t, raw)))
	if len(got.requests) != 2 || got.requests[0].method != "POST" || got.requests[1].method != "GET" ||
		got.requests[0].body != "hello world" {
		t.Errorf("valid/023: %+v", got)
	}
}
