package http1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// llhttpCase is one request case of llhttp's test/request/*.md.
type llhttpCase struct {
	file, name, kind string
	skipBody         bool
	input            []byte
	log              []string
}

var (
	llhttpMeta  = regexp.MustCompile(`^<!-- meta=(\{.*\}) -->$`)
	llhttpSpan  = regexp.MustCompile(`^off=\d+ len=\d+ span\[(\w+)\]=(.*)$`)
	llhttpError = regexp.MustCompile(`^off=\d+ error code=(\d+) reason="(.*)"$`)
)

func loadLLHTTP(t *testing.T) []llhttpCase {
	pattern := filepath.Join(conformanceDir, "llhttp", "request", "*.md")
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("llhttp corpus: %v", err)
	}
	if len(files) == 0 {
		t.Fatalf("llhttp corpus (test/request of github.com/nodejs/llhttp, kept in testdata/llhttp) missing: no %s", pattern)
	}
	var cases []llhttpCase
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		heading := ""
		for i := 0; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], "#") {
				heading = strings.TrimLeft(lines[i], "# ")
			}
			m := llhttpMeta.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			fence := i + 1
			for strings.TrimSpace(lines[fence]) == "" {
				fence++ // one case has a line holding a single space here
			}
			if lines[fence] != "```http" {
				t.Fatalf("%s:%d: meta without an http block", file, i+1)
			}
			var meta struct {
				Type     string
				SkipBody bool
			}
			if err := json.Unmarshal([]byte(m[1]), &meta); err != nil {
				t.Fatalf("%s:%d: %v", file, i+1, err)
			}
			c := llhttpCase{file: filepath.Base(file), name: heading, kind: meta.Type, skipBody: meta.SkipBody}
			j := fence + 1
			var text []string
			for ; lines[j] != "```"; j++ {
				text = append(text, lines[j])
			}
			c.input = decodeLLHTTP(strings.Join(text, "\n") + "\n")
			for j++; lines[j] != "```log"; j++ {
			}
			for j++; lines[j] != "```"; j++ {
				c.log = append(c.log, lines[j])
			}
			cases = append(cases, c)
			i = j
		}
	}
	return cases
}

// decodeLLHTTP turns an http block into wire bytes, the steps of FORMAT.md.
func decodeLLHTTP(text string) []byte {
	text = strings.TrimSuffix(text, "\n")
	text = strings.ReplaceAll(text, "\\\n", "")
	text = strings.ReplaceAll(text, "\n", "\r\n")
	var runes []rune
	for i := 0; i < len(text); {
		c := text[i]
		if c != '\\' || i+1 == len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			runes = append(runes, r)
			i += size
			continue
		}
		next := text[i+1]
		switch {
		case next == 'r' || next == 'n' || next == 't' || next == 'f':
			runes = append(runes, map[byte]rune{'r': '\r', 'n': '\n', 't': '\t', 'f': '\f'}[next])
			i += 2
		case next == 'x':
			j := i + 2
			for j < len(text) && strings.IndexByte("0123456789abcdefABCDEF", text[j]) >= 0 {
				j++
			}
			v, _ := strconv.ParseUint(text[i+2:j], 16, 32)
			runes = append(runes, rune(v))
			i = j
		case next >= '0' && next <= '7':
			j := i + 1
			for j < len(text) && j < i+4 && text[j] >= '0' && text[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(text[i+1:j], 8, 32)
			runes = append(runes, rune(v))
			i = j
		default:
			runes = append(runes, '\\')
			i++
		}
	}
	return []byte(string(runes))
}

// expected reads the requests a case's log describes, and the llhttp error
// code it ends with (0 for none).
func (c llhttpCase) expected() (requests []served, code int) {
	var cur served
	var field string
	inHead := true
	for _, line := range c.log {
		if strings.Contains(line, " headers complete ") {
			inHead = false // what follows are body and trailer fields
		}
		if m := llhttpError.FindStringSubmatch(line); m != nil {
			code, _ = strconv.Atoi(m[1])
			continue
		}
		if strings.HasSuffix(line, "message complete") {
			requests = append(requests, cur)
			cur, field, inHead = served{}, "", true
			continue
		}
		m := llhttpSpan.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := m[2]
		switch text {
		case "cr":
			text = "\r"
		case "lf":
			text = "\n"
		default:
			text = strings.NewReplacer(`\t`, "\t", `\f`, "\f").Replace(strings.TrimSuffix(strings.TrimPrefix(text, `"`), `"`))
		}
		switch m[1] {
		case "method":
			cur.method += text
		case "url":
			cur.target += text
		case "version":
			cur.version = "HTTP/" + text
		case "header_field":
			if !inHead {
				continue
			}
			if field == "" || len(cur.fields) == 0 || cur.fields[len(cur.fields)-1][1] != "" {
				cur.fields = append(cur.fields, [2]string{})
			}
			field = "name"
			cur.fields[len(cur.fields)-1][0] += text
		case "header_value":
			if !inHead {
				continue
			}
			field = "value"
			cur.fields[len(cur.fields)-1][1] += text
		case "body":
			cur.body += text
		}
	}
	return requests, code
}

// llhttpPolicy lists where this parser and strict llhttp part ways, and
// why: "accept" where llhttp refuses, "reject" where it accepts.
var llhttpPolicy = map[string]struct{ want, why string }{
	"invalid.md: HTTP protocol and ANNOUNCE method":                                          {"accept", "any token is a method (RFC 9110 §9.1); llhttp knows a fixed list"},
	"method.md: M-SEARCH request":                                                            {"reject", "asterisk-form is for OPTIONS only (RFC 9112 §3.2.4)"},
	"method.md: PRI request HTTP2":                                                           {"reject", "the HTTP/2 preface is not an HTTP/1.1 request; no h2c here"},
	"method.md: SOURCE request with ICE":                                                     {"reject", "ICE/1.0 is not HTTP"},
	"method.md: OPTIONS request with RTSP":                                                   {"reject", "RTSP/1.0 is not HTTP"},
	"method.md: ANNOUNCE request with RTSP":                                                  {"reject", "RTSP/1.0 is not HTTP"},
	"sample.md: No HTTP version":                                                             {"reject", "HTTP/0.9 requests are not served (RFC 9112 §2.3 needs a version)"},
	"invalid.md: Invalid method":                                                             {"accept", "MKCOLA is a token, so a method (RFC 9110 §9.1)"},
	"uri.md: Fragment in URI":                                                                {"reject", "a #fragment is not part of a request-target (RFC 9112 §3.2)"},
	"uri.md: `host:port` and basic auth":                                                     {"reject", "userinfo in an http URI is an error (RFC 9110 §4.2.4)"},
	"transfer-encoding.md: POST with `chunked` as last transfer-encoding":                    {"reject", "deflate transfer coding is not implemented: 501 (RFC 9112 §6.1)"},
	"transfer-encoding.md: POST with `chunked` as last transfer-encoding (multiple headers)": {"reject", "deflate transfer coding is not implemented: 501 (RFC 9112 §6.1)"},
}

func TestLLHTTPCorpus(t *testing.T) {
	cases := loadLLHTTP(t)
	if len(cases) != 166 {
		t.Fatalf("found %d cases, FORMAT.md counts 166", len(cases))
	}
	checked := 0
	for _, c := range cases {
		if c.kind != "request" || c.skipBody {
			// Lenient modes relax llhttp's own strictness, and skipBody
			// tests its callback API: this parser has neither, so their
			// expectations do not apply.
			continue
		}
		checked++
		id := c.file + ": " + c.name
		wantRequests, code := c.expected()
		got := serveConnection(c.input)
		if got.reason == errNoHost.Reason {
			// llhttp does not check Host; RFC 9112 §3.2 has the server
			// answer 400. The rest is checked with a Host added.
			got = serveConnection(withHost(c.input))
			for i := range got.requests {
				got.requests[i].fields = withoutAddedHost(got.requests[i].fields)
			}
		}
		if policy, ok := llhttpPolicy[id]; ok {
			if accepted := got.status == 0; accepted != (policy.want == "accept") {
				t.Errorf("%s: %v, want %s: %s", id, got, policy.want, policy.why)
			}
			continue
		}
		switch {
		case code == 0 || code == 5 || code == 22 || code == 23:
			// Accepted by llhttp (code 5: data after a closing request,
			// 22/23: protocol handover). Each request must come out the
			// same.
			if got.status != 0 || len(got.requests) < len(wantRequests) {
				t.Errorf("%s: %v, want %d requests\n%q", id, got, len(wantRequests), c.input)
				continue
			}
			for i, want := range wantRequests {
				if d := diffServed(got.requests[i], want); d != "" {
					t.Errorf("%s: request %d: %s", id, i, d)
				}
			}
		default:
			if got.status == 0 && len(got.requests) >= len(wantRequests)+1 {
				t.Errorf("%s: %v, llhttp refuses it (code %d)\n%q", id, got, code, c.input)
			}
			if got.status == 0 && !got.cutShort {
				t.Errorf("%s: %v accepted whole, llhttp refuses it (code %d)\n%q", id, got, code, c.input)
			}
		}
	}
	if checked < 130 {
		t.Errorf("only %d strict cases checked", checked)
	}
}

// withoutAddedHost removes the field withHost added: "Host: h", or the
// first field where an absolute-form target's authority replaced its value.
func withoutAddedHost(fields [][2]string) [][2]string {
	for i, f := range fields {
		if f == [2]string{"Host", "h"} || i == 0 && f[0] == "Host" {
			return append(fields[:i:i], fields[i+1:]...)
		}
	}
	return fields
}

func diffServed(got, want served) string {
	if got.method != want.method || got.target != want.target || got.version != want.version {
		return "request line " + got.method + " " + got.target + " " + got.version + ", want " + want.method + " " + want.target + " " + want.version
	}
	if len(got.fields) != len(want.fields) {
		return "field count " + strconv.Itoa(len(got.fields)) + ", want " + strconv.Itoa(len(want.fields))
	}
	for i := range got.fields {
		wantValue := strings.TrimRight(want.fields[i][1], " \t")
		if got.fields[i][0] != want.fields[i][0] || got.fields[i][1] != wantValue {
			return "field " + strconv.Quote(got.fields[i][0]+": "+got.fields[i][1]) + ", want " + strconv.Quote(want.fields[i][0]+": "+wantValue)
		}
	}
	if got.body != want.body {
		return "body " + strconv.Quote(got.body) + ", want " + strconv.Quote(want.body)
	}
	return ""
}
