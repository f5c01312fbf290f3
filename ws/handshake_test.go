package ws

import (
	"reflect"
	"strings"
	"testing"
)

// TestAcceptKeyVector is RFC 6455 §1.3's example.
func TestAcceptKeyVector(t *testing.T) {
	got := AcceptKey([]byte("dGhlIHNhbXBsZSBub25jZQ=="))
	if string(got[:]) != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("got %s", got)
	}
}

func upgradeRequest(fields ...string) *Request {
	r := &Request{Method: []byte("GET"), HTTP11: true}
	for i := 0; i+1 < len(fields); i += 2 {
		r.AddHeader([]byte(fields[i]), []byte(fields[i+1]))
	}
	return r
}

var validFields = []string{
	"Host", "example.com",
	"Upgrade", "websocket",
	"Connection", "Upgrade",
	"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==",
	"Sec-WebSocket-Version", "13",
}

// with returns validFields with name's value replaced (or the field
// dropped when value is "-"), plus any extra fields.
func with(name, value string, extra ...string) []string {
	var out []string
	for i := 0; i < len(validFields); i += 2 {
		if validFields[i] == name {
			if value != "-" {
				out = append(out, name, value)
			}
			continue
		}
		out = append(out, validFields[i], validFields[i+1])
	}
	return append(out, extra...)
}

// TestHandshakeRules checks §4.2.1 both ways.
func TestHandshakeRules(t *testing.T) {
	ok := []struct {
		name   string
		fields []string
	}{
		{"valid", validFields},
		{"header names in any case", []string{"HOST", "a", "upgrade", "WebSocket", "CONNECTION", "keep-alive, Upgrade", "sec-websocket-key", "AAAAAAAAAAAAAAAAAAAAAA==", "SEC-WEBSOCKET-VERSION", "13"}},
		{"upgrade among tokens", with("Upgrade", "foo/1, websocket")},
		{"connection in two fields", with("Connection", "keep-alive", "Connection", "upgrade")},
		{"connection with empty elements", with("Connection", " , upgrade ,")},
	}
	for _, c := range ok {
		if _, err := Accept(upgradeRequest(c.fields...), Options{}); err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
		}
	}
	bad := []struct {
		name   string
		req    *Request
		want   *HandshakeError
		status int
	}{
		{"POST", func() *Request { r := upgradeRequest(validFields...); r.Method = []byte("POST"); return r }(), ErrMethod, 400},
		{"get in lower case", func() *Request { r := upgradeRequest(validFields...); r.Method = []byte("get"); return r }(), ErrMethod, 400},
		{"HTTP/1.0", func() *Request { r := upgradeRequest(validFields...); r.HTTP11 = false; return r }(), ErrHTTPVersion, 400},
		{"no Host", upgradeRequest(with("Host", "-")...), ErrNoHost, 400},
		{"no Upgrade", upgradeRequest(with("Upgrade", "-")...), ErrUpgrade, 400},
		{"Upgrade h2c", upgradeRequest(with("Upgrade", "h2c")...), ErrUpgrade, 400},
		{"Upgrade websocketx", upgradeRequest(with("Upgrade", "websocketx")...), ErrUpgrade, 400},
		{"no Connection", upgradeRequest(with("Connection", "-")...), ErrConnection, 400},
		{"Connection keep-alive", upgradeRequest(with("Connection", "keep-alive")...), ErrConnection, 400},
		{"Connection upgraded", upgradeRequest(with("Connection", "upgraded")...), ErrConnection, 400},
		{"no key", upgradeRequest(with("Sec-WebSocket-Key", "-")...), ErrKey, 400},
		{"key of 15 bytes", upgradeRequest(with("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAA")...), ErrKey, 400},
		{"key of 17 bytes", upgradeRequest(with("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAAAAA=")...), ErrKey, 400},
		{"key not base64", upgradeRequest(with("Sec-WebSocket-Key", "!!!!!!!!!!!!!!!!!!!!!!==")...), ErrKey, 400},
		{"two keys", upgradeRequest(with("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")...), ErrKey, 400},
		{"no version", upgradeRequest(with("Sec-WebSocket-Version", "-")...), ErrNoVersion, 400},
		{"version 8", upgradeRequest(with("Sec-WebSocket-Version", "8")...), ErrVersion, 426},
		{"version 14", upgradeRequest(with("Sec-WebSocket-Version", "14")...), ErrVersion, 426},
		{"two versions", upgradeRequest(with("Sec-WebSocket-Version", "13", "Sec-WebSocket-Version", "8")...), ErrVersion, 426},
	}
	for _, c := range bad {
		_, err := Accept(c.req, Options{})
		if err != c.want {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
			continue
		}
		if c.want.Status != c.status {
			t.Errorf("%s: status %d, want %d", c.name, c.want.Status, c.status)
		}
	}
	if ErrVersion.Header != "Sec-WebSocket-Version: 13\r\n" {
		t.Errorf("426 header: %q", ErrVersion.Header)
	}
}

// TestResponse checks the whole 101 head.
func TestResponse(t *testing.T) {
	req := upgradeRequest(with("Sec-WebSocket-Protocol", "-", "Sec-WebSocket-Protocol", "chat, superchat", "Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")...)
	h, err := Accept(req, Options{Compression: true})
	if err != nil {
		t.Fatal(err)
	}
	if !req.OffersProtocol([]byte("superchat")) || req.OffersProtocol([]byte("super")) {
		t.Fatal("OffersProtocol")
	}
	got := string(h.AppendResponse([]byte("x"), []byte("chat"), []byte("Date: now\r\n")))
	want := "xHTTP/1.1 101 Switching Protocols\r\n" +
		"Upgrade: websocket\r\n" +
		"Connection: Upgrade\r\n" +
		"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n" +
		"Sec-WebSocket-Protocol: chat\r\n" +
		"Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n" +
		"Date: now\r\n\r\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	h, _ = Accept(upgradeRequest(validFields...), Options{Compression: true})
	if got := string(h.AppendResponse(nil, nil, nil)); strings.Contains(got, "Sec-WebSocket-Protocol") || strings.Contains(got, "Sec-WebSocket-Extensions") || !strings.HasSuffix(got, "=\r\n\r\n") {
		t.Fatalf("plain response:\n%s", got)
	}
}

func TestProtocols(t *testing.T) {
	req := upgradeRequest("Sec-WebSocket-Protocol", "a, b ,,c", "Sec-WebSocket-Protocol", "d")
	var got []string
	for _, p := range req.Protocols(nil) {
		got = append(got, string(p))
	}
	if !reflect.DeepEqual(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("got %q", got)
	}
}

// TestExtensionParsing checks RFC 6455 §9.1's grammar.
func TestExtensionParsing(t *testing.T) {
	list := ParseExtensions([][]byte{
		[]byte(`permessage-deflate; client_max_window_bits; server_max_window_bits="10", foo`),
		[]byte(` x-webkit-deflate-frame ;a=1 ; b = "2"`),
	})
	var got []string
	for name, params, ok := list.Next(); ok; name, params, ok = list.Next() {
		s := string(name)
		for pn, pv, has, ok := params.Next(); ok; pn, pv, has, ok = params.Next() {
			s += ";" + string(pn)
			if has {
				s += "=" + string(pv)
			}
		}
		got = append(got, s)
	}
	want := []string{"permessage-deflate;client_max_window_bits;server_max_window_bits=10", "foo", "x-webkit-deflate-frame;a=1;b=2"}
	if list.Err() || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q (err %v)", got, list.Err())
	}
	for _, bad := range []string{`a;`, `a;=1`, `a; b=`, `a; b="1`, `a; b="x y"`, `a b`, `;a`, `a; b="\"x"`, `a; b=1 c`} {
		list := ParseExtensions([][]byte{[]byte(bad)})
		for _, _, ok := list.Next(); ok; _, _, ok = list.Next() {
		}
		if !list.Err() {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestDeflateNegotiation checks RFC 7692 §7.1: the server answers an
// acceptable offer with both no-context-takeover parameters, declines bad
// offers and falls through to the next.
func TestDeflateNegotiation(t *testing.T) {
	cases := []struct {
		offer, want string
	}{
		{"permessage-deflate", deflateResponse},
		{"permessage-deflate; client_max_window_bits", deflateResponse},
		{"permessage-deflate; client_max_window_bits=10", deflateResponse},
		{"permessage-deflate; server_no_context_takeover; client_no_context_takeover", deflateResponse},
		{"permessage-deflate; server_max_window_bits=15", deflateResponseWindow},
		{"PerMessage-Deflate", deflateResponse},
		{"permessage-deflate; server_max_window_bits=10", ""},
		{"permessage-deflate; server_max_window_bits", ""},
		{"permessage-deflate; client_max_window_bits=7", ""},
		{"permessage-deflate; client_max_window_bits=16", ""},
		{"permessage-deflate; client_max_window_bits=08", ""},
		{"permessage-deflate; server_no_context_takeover=1", ""},
		{"permessage-deflate; client_no_context_takeover; client_no_context_takeover", ""},
		{"permessage-deflate; unknown", ""},
		{"permessage-deflate; server_max_window_bits=10, permessage-deflate", deflateResponse},
		{"x-webkit-deflate-frame", ""},
	}
	for _, c := range cases {
		req := upgradeRequest(with("", "", "Sec-WebSocket-Extensions", c.offer)...)
		h, err := Accept(req, Options{Compression: true})
		if err != nil || h.Extension() != c.want || h.Compression != (c.want != "") {
			t.Errorf("%q: got %q, %v (compression %v), want %q", c.offer, h.Extension(), err, h.Compression, c.want)
		}
	}
	req := upgradeRequest(with("", "", "Sec-WebSocket-Extensions", "permessage-deflate")...)
	if h, _ := Accept(req, Options{}); h.Compression || h.Extension() != "" {
		t.Error("negotiated with compression off")
	}
	req = upgradeRequest(with("", "", "Sec-WebSocket-Extensions", "permessage-deflate; a=")...)
	if _, err := Accept(req, Options{Compression: true}); err != ErrExtensionList {
		t.Errorf("malformed: got %v", err)
	}
}

// RFC 8441: an extended CONNECT carries no key, Upgrade or Connection;
// the version and the extensions still count.
func TestAcceptExtendedConnect(t *testing.T) {
	r := &Request{Method: []byte("CONNECT"), Extended: true, Version: [][]byte{[]byte("13")},
		Extensions: [][]byte{[]byte("permessage-deflate; client_max_window_bits")}}
	if !r.IsWebSocket() {
		t.Fatal("IsWebSocket false for an extended CONNECT")
	}
	h, err := Accept(r, Options{Compression: true})
	if err != nil || !h.Compression || h.Extension() == "" {
		t.Fatalf("accept: %v %+v", err, h)
	}
	r.Version = [][]byte{[]byte("8")}
	if _, err := Accept(r, Options{}); err != ErrVersion {
		t.Fatalf("version 8: %v", err)
	}
}
