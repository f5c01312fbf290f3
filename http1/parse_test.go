package http1

import (
	"fmt"
	"strings"
	"testing"
)

// parseAll parses one head from s and fails the test on an error.
func parseAll(t *testing.T, s string) *Request {
	t.Helper()
	var p Parser
	r := new(Request)
	n, err := p.Parse([]byte(s), r)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	if n != r.HeadLength {
		t.Fatalf("Parse(%q) = %d, HeadLength %d", s, n, r.HeadLength)
	}
	return r
}

// statusOf parses s and returns the rejection status, 0 for success, or
// -1 when the head is incomplete.
func statusOf(s string) (int, string) {
	var p Parser
	var r Request
	_, err := p.Parse([]byte(s), &r)
	switch e := err.(type) {
	case nil:
		return 0, ""
	case *Error:
		return e.Status, e.Reason
	default:
		if err == ErrIncomplete {
			return -1, "incomplete"
		}
		return -2, err.Error()
	}
}

func TestParseSimpleGet(t *testing.T) {
	s := "GET /a/b?x=1&y HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\nrest"
	r := parseAll(t, s)
	buf := []byte(s)
	r.Rebase(buf)
	checks := []struct{ name, got, want string }{
		{"method", string(r.Bytes(r.Method)), "GET"},
		{"target", string(r.Bytes(r.Target)), "/a/b?x=1&y"},
		{"path", string(r.Bytes(r.Path)), "/a/b"},
		{"query", string(r.Bytes(r.Query)), "x=1&y"},
		{"host", string(r.Header.Known(HeaderHost)), "example.com"},
		{"user-agent", string(r.Header.Get("user-agent")), "t"},
		{"USER-AGENT", string(r.Header.Get("USER-AGENT")), "t"},
		{"rest", s[r.HeadLength:], "rest"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if r.Version != Version11 || !r.KeepAlive || r.ContentLength != -1 || r.Chunked || r.Form != FormOrigin {
		t.Errorf("request = %+v", r)
	}
}

// TestRules states each parsing rule both ways: the accepted shape and the
// rejected one, with the status the rejection carries.
func TestRules(t *testing.T) {
	const host = "Host: h\r\n"
	cases := []struct {
		rule   string
		head   string
		status int // 0: accepted
	}{
		{"request line: single SP", "GET / HTTP/1.1\r\n" + host + "\r\n", 0},
		{"request line: double SP", "GET  / HTTP/1.1\r\n" + host + "\r\n", 400},
		{"request line: HTAB separator", "GET\t/ HTTP/1.1\r\n" + host + "\r\n", 400},
		{"request line: trailing SP", "GET / HTTP/1.1 \r\n" + host + "\r\n", 400},
		{"method: token", "M-SEARCH * HTTP/1.1\r\n" + host + "\r\n", 400}, // asterisk only for OPTIONS
		{"method: token ok", "M-SEARCH / HTTP/1.1\r\n" + host + "\r\n", 0},
		{"method: non-token", "GE:T / HTTP/1.1\r\n" + host + "\r\n", 400},
		{"method: empty", " / HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: missing", "GET HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: non-ASCII", "GET /\xc3\xa9 HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: DEL", "GET /\x7f HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: fragment", "GET /a#b HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: absolute-form", "GET http://h/x?y HTTP/1.1\r\n" + host + "\r\n", 0},
		{"target: absolute-form ftp", "GET ftp://h/x HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: absolute-form mailto-like", "GET httpx://h/x HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: absolute-form HTTPS upper case", "GET HTTPS://h/x HTTP/1.1\r\n" + host + "\r\n", 0},
		{"target: absolute-form without authority", "GET http:///x HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: relative", "GET a/b HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: asterisk with OPTIONS", "OPTIONS * HTTP/1.1\r\n" + host + "\r\n", 0},
		{"target: asterisk with GET", "GET * HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: encoded NUL in path", "GET /a%00b HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: encoded NUL in absolute-form path", "GET http://h/a%00 HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: encoded NUL in query", "GET /a?b=%00 HTTP/1.1\r\n" + host + "\r\n", 0},
		{"target: other escapes in path", "GET /a%01%20%2F HTTP/1.1\r\n" + host + "\r\n", 0},
		{"target: CONNECT authority", "CONNECT h:443 HTTP/1.1\r\n" + host + "\r\n", 0},
		{"target: CONNECT origin", "CONNECT /x HTTP/1.1\r\n" + host + "\r\n", 400},
		{"target: CONNECT without port", "CONNECT h HTTP/1.1\r\n" + host + "\r\n", 400},
		{"version: 1.0", "GET / HTTP/1.0\r\n\r\n", 0},
		{"version: 1.2 served as 1.1", "GET / HTTP/1.2\r\n" + host + "\r\n", 0},
		{"version: 2.0", "GET / HTTP/2.0\r\n" + host + "\r\n", 505},
		{"version: 0.9", "GET / HTTP/0.9\r\n" + host + "\r\n", 505},
		{"version: lower case", "GET / http/1.1\r\n" + host + "\r\n", 400},
		{"version: missing minor", "GET / HTTP/1\r\n" + host + "\r\n", 400},
		{"version: two digits", "GET / HTTP/1.10\r\n" + host + "\r\n", 400},
		{"version: missing", "GET /\r\n" + host + "\r\n", 400},
		{"line end: CRLF", "GET / HTTP/1.1\r\nHost: h\r\n\r\n", 0},
		{"line end: bare LF", "GET / HTTP/1.1\nHost: h\n\n", 0},
		{"line end: bare CR in request line", "GET / HTTP/1.1\rHost: h\r\n\r\n", 400},
		{"line end: bare CR in value", "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400},
		{"line end: bare CR at head end", "GET / HTTP/1.1\r\nHost: h\r\n\r\r\n", 400},
		{"empty lines before request line", "\r\n\r\nGET / HTTP/1.1\r\n" + host + "\r\n", 0},
		{"obs-fold", "GET / HTTP/1.1\r\n" + host + "X: a\r\n b\r\n\r\n", 400},
		{"whitespace before first field", "GET / HTTP/1.1\r\n " + host + "\r\n", 400},
		{"space before colon", "GET / HTTP/1.1\r\n" + host + "X : a\r\n\r\n", 400},
		{"tab before colon", "GET / HTTP/1.1\r\n" + host + "X\t: a\r\n\r\n", 400},
		{"no colon", "GET / HTTP/1.1\r\n" + host + "X a\r\n\r\n", 400},
		{"empty name", "GET / HTTP/1.1\r\n" + host + ": a\r\n\r\n", 400},
		{"non-token name", "GET / HTTP/1.1\r\n" + host + "X(y): a\r\n\r\n", 400},
		{"non-ASCII name", "GET / HTTP/1.1\r\n" + host + "X\xc3\xa9: a\r\n\r\n", 400},
		{"value: HTAB inside", "GET / HTTP/1.1\r\n" + host + "X: a\tb\r\n\r\n", 0},
		{"value: obs-text", "GET / HTTP/1.1\r\n" + host + "X: caf\xc3\xa9\r\n\r\n", 0},
		{"value: NUL", "GET / HTTP/1.1\r\n" + host + "X: a\x00b\r\n\r\n", 400},
		{"value: control", "GET / HTTP/1.1\r\n" + host + "X: a\x01b\r\n\r\n", 400},
		{"value: DEL", "GET / HTTP/1.1\r\n" + host + "X: a\x7fb\r\n\r\n", 400},
		{"value: empty", "GET / HTTP/1.1\r\n" + host + "X:\r\n\r\n", 0},
		{"content-length: digits", "POST / HTTP/1.1\r\n" + host + "Content-Length: 5\r\n\r\n", 0},
		{"content-length: sign", "POST / HTTP/1.1\r\n" + host + "Content-Length: +5\r\n\r\n", 400},
		{"content-length: empty", "POST / HTTP/1.1\r\n" + host + "Content-Length:\r\n\r\n", 400},
		{"content-length: list", "POST / HTTP/1.1\r\n" + host + "Content-Length: 5, 5\r\n\r\n", 400},
		{"content-length: repeated same", "POST / HTTP/1.1\r\n" + host + "Content-Length: 5\r\nContent-Length: 5\r\n\r\n", 0},
		{"content-length: repeated differing", "POST / HTTP/1.1\r\n" + host + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", 400},
		{"content-length: max int64", "POST / HTTP/1.1\r\n" + host + "Content-Length: 9223372036854775807\r\n\r\n", 0},
		{"content-length: overflow", "POST / HTTP/1.1\r\n" + host + "Content-Length: 9223372036854775808\r\n\r\n", 400},
		{"transfer-encoding: chunked", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n", 0},
		{"transfer-encoding: upper case", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: CHUNKED\r\n\r\n", 0},
		{"transfer-encoding: with content-length", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400},
		{"transfer-encoding: final not chunked", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked, gzip\r\n\r\n", 400},
		{"transfer-encoding: identity", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: identity\r\n\r\n", 400},
		{"transfer-encoding: gzip then chunked", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501},
		{"transfer-encoding: chunked twice", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"transfer-encoding: HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"host: missing on 1.1", "GET / HTTP/1.1\r\n\r\n", 400},
		{"host: missing on 1.0", "GET / HTTP/1.0\r\n\r\n", 0},
		{"host: empty value", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 0},
		{"host: twice", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400},
		{"host: name and port", "GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n", 0},
		{"host: IPv4", "GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n", 0},
		{"host: IPv6 literal", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", 0},
		{"host: space inside", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
		{"host: tab inside", "GET / HTTP/1.1\r\nHost: a\tb\r\n\r\n", 400},
		{"host: slash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400},
		{"host: userinfo", "GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", 400},
		{"host: comma", "GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", 400},
		{"host: markup", "GET / HTTP/1.1\r\nHost: <script>\r\n\r\n", 400},
		{"host: non-digit port", "GET / HTTP/1.1\r\nHost: a:8o\r\n\r\n", 400},
		{"host: unclosed IPv6 literal", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400},
		{"host: on 1.0, invalid", "GET / HTTP/1.0\r\nHost: a/b\r\n\r\n", 400},
		{"host: absolute-form, other host", "GET http://a:1/x HTTP/1.1\r\nHost: b\r\n\r\n", 0},
		{"host: absolute-form, empty", "GET http://a/x HTTP/1.1\r\nHost:\r\n\r\n", 400},
		{"host: absolute-form, invalid", "GET http://a/x HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
		{"host: absolute-form on 1.0 without Host", "GET http://a/x HTTP/1.0\r\n\r\n", 0},
		{"expect: 100-continue", "POST / HTTP/1.1\r\n" + host + "Expect: 100-continue\r\n\r\n", 0},
		{"expect: other", "POST / HTTP/1.1\r\n" + host + "Expect: 200-ok\r\n\r\n", 417},
	}
	for _, c := range cases {
		got, reason := statusOf(c.head)
		if got != c.status {
			t.Errorf("%s: status %d (%s), want %d\n%q", c.rule, got, reason, c.status, c.head)
		}
	}
}

// TestAbsoluteFormHost: the target's authority replaces the Host value
// (RFC 9112 §3.2.2); an origin-form target leaves Host as sent.
func TestAbsoluteFormHost(t *testing.T) {
	cases := []struct{ head, host, authority string }{
		{"GET http://a.example:8080/x?y HTTP/1.1\r\nHost: b.example\r\n\r\n", "a.example:8080", "a.example:8080"},
		{"GET http://a.example?y HTTP/1.1\r\nHost: a.example\r\n\r\n", "a.example", "a.example"},
		{"GET /x HTTP/1.1\r\nHost: b.example\r\n\r\n", "b.example", ""},
		{"GET /x HTTP/1.1\r\nHost:\r\n\r\n", "", ""},
	}
	for _, c := range cases {
		r := parseAll(t, c.head)
		if got := string(r.Header.Known(HeaderHost)); got != c.host {
			t.Errorf("%q: Host %q, want %q", c.head, got, c.host)
		}
		if got := string(r.Header.Get("host")); got != c.host {
			t.Errorf("%q: Get(host) %q, want %q", c.head, got, c.host)
		}
		if got := string(r.Bytes(r.Authority)); got != c.authority {
			t.Errorf("%q: Authority %q, want %q", c.head, got, c.authority)
		}
	}
}

func TestConnectionOptions(t *testing.T) {
	cases := []struct {
		head                 string
		keepAlive, upgrade   bool
		expect100, hasLength bool
	}{
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", true, false, false, false},
		{"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false, false, false, false},
		{"GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, CLOSE\r\n\r\n", false, false, false, false},
		{"GET / HTTP/1.0\r\n\r\n", false, false, false, false},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true, false, false, false},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", false, false, false, false},
		{"GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", true, true, false, false},
		{"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n", true, false, false, false},
		{"GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\n\r\n", true, false, false, false},
		{"PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n", true, false, true, true},
		{"PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n", false, false, false, true},
	}
	for _, c := range cases {
		r := parseAll(t, c.head)
		if r.KeepAlive != c.keepAlive || r.Upgrade != c.upgrade || r.Expect100 != c.expect100 || (r.ContentLength >= 0) != c.hasLength {
			t.Errorf("%q: keepAlive %v upgrade %v expect100 %v length %d; want %v %v %v %v",
				c.head, r.KeepAlive, r.Upgrade, r.Expect100, r.ContentLength, c.keepAlive, c.upgrade, c.expect100, c.hasLength)
		}
	}
}

func TestTargetForms(t *testing.T) {
	cases := []struct {
		line        string
		form        TargetForm
		path, query string
	}{
		{"GET /p?q HTTP/1.1", FormOrigin, "/p", "q"},
		{"GET /p? HTTP/1.1", FormOrigin, "/p", ""},
		{"GET /?a?b HTTP/1.1", FormOrigin, "/", "a?b"},
		{"GET http://h:80/p/q?x HTTP/1.1", FormAbsolute, "/p/q", "x"},
		{"GET HTTPS://h HTTP/1.1", FormAbsolute, "", ""},
		{"GET http://h?x HTTP/1.1", FormAbsolute, "", "x"},
		{"CONNECT h:443 HTTP/1.1", FormAuthority, "", ""},
		{"OPTIONS * HTTP/1.1", FormAsterisk, "*", ""},
	}
	for _, c := range cases {
		r := parseAll(t, c.line+"\r\nHost: h\r\n\r\n")
		if r.Form != c.form || string(r.Bytes(r.Path)) != c.path || string(r.Bytes(r.Query)) != c.query {
			t.Errorf("%q: form %d path %q query %q; want %d %q %q", c.line, r.Form, r.Bytes(r.Path), r.Bytes(r.Query), c.form, c.path, c.query)
		}
	}
}

func TestRepeatedFieldsKeepOrder(t *testing.T) {
	r := parseAll(t, "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nCookie: a=1\r\nx-a: 2\r\nCOOKIE: b=2\r\nX-B: 3\r\nX-A: 3\r\n\r\n")
	vals := r.Header.Values(nil, "X-A")
	if fmt.Sprintf("%s", vals) != "[1 2 3]" {
		t.Errorf("Values(X-A) = %s", vals)
	}
	if got := fmt.Sprintf("%s", r.Header.Values(nil, "cookie")); got != "[a=1 b=2]" {
		t.Errorf("Values(cookie) = %s", got)
	}
	if r.Header.Get("X-C") != nil || r.Header.Values(nil, "x-c") != nil {
		t.Error("absent name found")
	}
	var names []string
	for i := 0; i < r.Header.Len(); i++ {
		name, _ := r.Header.Field(i)
		names = append(names, string(name))
	}
	if got := strings.Join(names, ","); got != "Host,X-A,Cookie,x-a,COOKIE,X-B,X-A" {
		t.Errorf("order = %s", got)
	}
}

func TestPipelined(t *testing.T) {
	one := "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
	two := "POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
	three := "GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
	buf := []byte(one + two + three)
	var p Parser
	var r Request
	var targets []string
	for off := 0; off < len(buf); {
		n, err := p.Parse(buf[off:], &r)
		if err != nil {
			t.Fatalf("at %d: %v", off, err)
		}
		targets = append(targets, string(r.Bytes(r.Target)))
		off += n
		if r.ContentLength > 0 {
			off += int(r.ContentLength)
		}
	}
	if got := strings.Join(targets, " "); got != "/1 /2 /3" {
		t.Errorf("targets = %s", got)
	}
}

func TestDecodePath(t *testing.T) {
	cases := []struct {
		in, out string
		ok      bool
	}{
		{"/a%20b", "/a b", true},
		{"/%2F%2f", "///", true},
		{"/a+b", "/a+b", true},
		{"/%e2%82%ac", "/\xe2\x82\xac", true},
		{"/%", "", false},
		{"/%2", "", false},
		{"/%zz", "", false},
		{"/%2g", "", false},
		{"/x%41", "/xA", true},
	}
	for _, c := range cases {
		got, err := DecodePath(nil, []byte(c.in))
		if (err == nil) != c.ok || (c.ok && string(got) != c.out) {
			t.Errorf("DecodePath(%q) = %q, %v", c.in, got, err)
		}
		if err != nil && err.(*Error).Status != 400 {
			t.Errorf("DecodePath(%q) status %d", c.in, err.(*Error).Status)
		}
	}
}

// TestSWARLaneOrder pins the little-endian load the scanners assume: the
// byte at the lowest address must be lane 0.
func TestSWARLaneOrder(t *testing.T) {
	for at := 0; at < 8; at++ {
		b := []byte("abcdefgh")
		b[at] = '\r'
		if got := scanControl(b, 0); got != at {
			t.Fatalf("CR at %d found at %d: the word load is not little-endian", at, got)
		}
	}
}
