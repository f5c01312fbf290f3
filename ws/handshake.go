package ws

import (
	"crypto/sha1"
	"encoding/base64"
)

// acceptGUID is the string §1.3 appends to the client's key.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// Request is what the opening handshake needs from an upgrade request's
// head (§4.2.1). The caller fills it from its parsed request: the method,
// whether the version is HTTP/1.1 or later, and each header field through
// AddHeader (or the value lists directly). Values are used in place, not
// copied. A Request kept by the caller and Reset for each request reuses
// its lists and allocates nothing.
type Request struct {
	Method []byte
	HTTP11 bool // HTTP/1.1 or later
	Host   bool // a Host field is present
	// Extended is an HTTP/2 extended CONNECT with :protocol websocket
	// (RFC 8441 §4): the stream is the connection, so there is no
	// Upgrade, Connection or Sec-WebSocket-Key, and the method is CONNECT.
	Extended bool

	Upgrade    [][]byte // values of Upgrade fields
	Connection [][]byte // values of Connection fields
	Key        [][]byte // values of Sec-WebSocket-Key fields (exactly one is valid)
	Version    [][]byte // values of Sec-WebSocket-Version fields
	Protocol   [][]byte // values of Sec-WebSocket-Protocol fields
	Extensions [][]byte // values of Sec-WebSocket-Extensions fields
}

// Reset empties the request, keeping its lists' storage.
func (r *Request) Reset() {
	*r = Request{
		Upgrade:    r.Upgrade[:0],
		Connection: r.Connection[:0],
		Key:        r.Key[:0],
		Version:    r.Version[:0],
		Protocol:   r.Protocol[:0],
		Extensions: r.Extensions[:0],
	}
}

// AddHeader records a header field if the handshake uses it; the name is
// matched ignoring case, and the value should have its surrounding
// whitespace removed (as http1 does).
func (r *Request) AddHeader(name, value []byte) {
	switch len(name) {
	case 4:
		if equalFold(name, "host") {
			r.Host = true
		}
	case 7:
		if equalFold(name, "upgrade") {
			r.Upgrade = append(r.Upgrade, value)
		}
	case 10:
		if equalFold(name, "connection") {
			r.Connection = append(r.Connection, value)
		}
	case 17:
		if equalFold(name, "sec-websocket-key") {
			r.Key = append(r.Key, value)
		}
	case 21:
		if equalFold(name, "sec-websocket-version") {
			r.Version = append(r.Version, value)
		}
	case 22:
		if equalFold(name, "sec-websocket-protocol") {
			r.Protocol = append(r.Protocol, value)
		}
	case 24:
		if equalFold(name, "sec-websocket-extensions") {
			r.Extensions = append(r.Extensions, value)
		}
	}
}

// IsWebSocket reports whether the request asks to upgrade to WebSocket: an
// Upgrade field lists "websocket". Whether it asks correctly is Accept's
// to say.
func (r *Request) IsWebSocket() bool { return r.Extended || hasToken(r.Upgrade, "websocket") }

// Protocols appends the subprotocols the client offers (§4.2.1 item 8, in
// its order of preference) to dst.
func (r *Request) Protocols(dst [][]byte) [][]byte {
	var t tokens
	for _, v := range r.Protocol {
		t.reset(v)
		for tok, ok := t.next(); ok; tok, ok = t.next() {
			dst = append(dst, tok)
		}
	}
	return dst
}

// OffersProtocol reports whether the client offered the subprotocol p:
// the server may only select one it was offered (§4.2.2).
func (r *Request) OffersProtocol(p []byte) bool {
	var t tokens
	for _, v := range r.Protocol {
		t.reset(v)
		for tok, ok := t.next(); ok; tok, ok = t.next() {
			if string(tok) == string(p) {
				return true
			}
		}
	}
	return false
}

// HandshakeError is a refused opening handshake: the HTTP status to answer
// with, a reason, and any header field lines the answer must carry.
type HandshakeError struct {
	Status int
	Reason string
	// Header is "Sec-WebSocket-Version: 13\r\n" for a 426: the version
	// the server speaks (§4.2.2 item 4). Empty otherwise.
	Header string
}

func (e *HandshakeError) Error() string { return "websocket handshake: " + e.Reason }

var (
	ErrMethod        = &HandshakeError{Status: 400, Reason: "method is not GET"}
	ErrHTTPVersion   = &HandshakeError{Status: 400, Reason: "HTTP version is before 1.1"}
	ErrNoHost        = &HandshakeError{Status: 400, Reason: "no Host field"}
	ErrUpgrade       = &HandshakeError{Status: 400, Reason: `Upgrade does not list "websocket"`}
	ErrConnection    = &HandshakeError{Status: 400, Reason: `Connection does not list "upgrade"`}
	ErrKey           = &HandshakeError{Status: 400, Reason: "Sec-WebSocket-Key is missing, repeated, or not 16 bytes in base64"}
	ErrNoVersion     = &HandshakeError{Status: 400, Reason: "no Sec-WebSocket-Version"}
	ErrVersion       = &HandshakeError{Status: 426, Reason: "Sec-WebSocket-Version is not 13", Header: "Sec-WebSocket-Version: 13\r\n"}
	ErrExtensionList = &HandshakeError{Status: 400, Reason: "Sec-WebSocket-Extensions is malformed"}
)

// Options are the server's choices for a handshake.
type Options struct {
	// Compression accepts permessage-deflate when the client offers it.
	Compression bool
}

// Handshake is an accepted opening handshake.
type Handshake struct {
	// Accept is the Sec-WebSocket-Accept value (§4.2.2 item 5.4).
	Accept [28]byte
	// Compression: permessage-deflate was negotiated, with no context
	// takeover either way.
	Compression bool
	// extension is the Sec-WebSocket-Extensions value to answer with.
	extension string
}

// Accept checks the request against §4.2.1 and, when it is a valid
// opening handshake, returns what the response needs. A refusal is a
// *HandshakeError.
func Accept(r *Request, opts Options) (Handshake, error) {
	var h Handshake
	if r.Extended {
		return acceptExtended(r, opts)
	}
	switch {
	case string(r.Method) != "GET":
		return h, ErrMethod
	case !r.HTTP11:
		return h, ErrHTTPVersion
	case !r.Host:
		return h, ErrNoHost
	case !hasToken(r.Upgrade, "websocket"):
		return h, ErrUpgrade
	case !hasToken(r.Connection, "upgrade"):
		return h, ErrConnection
	case len(r.Version) == 0:
		return h, ErrNoVersion
	case len(r.Version) != 1 || string(r.Version[0]) != "13":
		return h, ErrVersion
	case len(r.Key) != 1 || !validKey(r.Key[0]):
		return h, ErrKey
	}
	h.Accept = AcceptKey(r.Key[0])
	if opts.Compression && len(r.Extensions) > 0 {
		ext, err := negotiateDeflate(r.Extensions)
		if err != nil {
			return h, err
		}
		h.extension = ext
		h.Compression = ext != ""
	}
	return h, nil
}

// validKey reports whether key is base64 for 16 bytes (§4.2.1 item 5):
// 22 significant characters and "==".
// acceptExtended checks an RFC 8441 request: of RFC 6455's fields only
// the version, protocols and extensions apply (§5); it is answered with
// a 200 that carries no Sec-WebSocket-Accept.
func acceptExtended(r *Request, opts Options) (Handshake, error) {
	var h Handshake
	switch {
	case len(r.Version) == 0:
		return h, ErrNoVersion
	case len(r.Version) != 1 || string(r.Version[0]) != "13":
		return h, ErrVersion
	}
	if opts.Compression && len(r.Extensions) > 0 {
		ext, err := negotiateDeflate(r.Extensions)
		if err != nil {
			return h, err
		}
		h.extension = ext
		h.Compression = ext != ""
	}
	return h, nil
}

func validKey(key []byte) bool {
	if len(key) != 24 {
		return false
	}
	var raw [18]byte
	n, err := base64.StdEncoding.Decode(raw[:], key)
	return err == nil && n == 16
}

// AcceptKey returns the Sec-WebSocket-Accept value for a client's key: the
// base64 of the SHA-1 of the key and the GUID (§1.3, §4.2.2).
func AcceptKey(key []byte) (accept [28]byte) {
	var buf [64]byte
	in := append(append(buf[:0], key...), acceptGUID...)
	sum := sha1.Sum(in)
	base64.StdEncoding.Encode(accept[:], sum[:])
	return accept
}

// AppendResponse appends the head of the 101 (Switching Protocols)
// response (§4.2.2 item 5) to dst, ending with the empty line. protocol is
// the selected subprotocol (nil for none; the caller checks it with
// OffersProtocol), and header holds further field lines, each ending in
// CRLF, such as the app's own and the server's Date.
func (h *Handshake) AppendResponse(dst, protocol, header []byte) []byte {
	dst = append(dst, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	dst = append(dst, h.Accept[:]...)
	dst = append(dst, "\r\n"...)
	if len(protocol) > 0 {
		dst = append(dst, "Sec-WebSocket-Protocol: "...)
		dst = append(dst, protocol...)
		dst = append(dst, "\r\n"...)
	}
	if h.extension != "" {
		dst = append(dst, "Sec-WebSocket-Extensions: "...)
		dst = append(dst, h.extension...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, header...)
	return append(dst, "\r\n"...)
}

// Extension is the Sec-WebSocket-Extensions value the response carries,
// empty when none was negotiated.
func (h *Handshake) Extension() string { return h.extension }

// hasToken reports whether a comma-separated token list in any of values
// holds want, ignoring case (RFC 9110 §5.6.1).
func hasToken(values [][]byte, want string) bool {
	var t tokens
	for _, v := range values {
		t.reset(v)
		for tok, ok := t.next(); ok; tok, ok = t.next() {
			if equalFold(tok, want) {
				return true
			}
		}
	}
	return false
}

// tokens walks a comma-separated list, skipping whitespace and empty
// elements (RFC 9110 §5.6.1).
type tokens struct{ rest []byte }

func (t *tokens) reset(v []byte) { t.rest = v }

func (t *tokens) next() ([]byte, bool) {
	for len(t.rest) > 0 {
		i := 0
		for i < len(t.rest) && t.rest[i] != ',' {
			i++
		}
		tok := trimSpace(t.rest[:i])
		if i < len(t.rest) {
			i++
		}
		t.rest = t.rest[i:]
		if len(tok) > 0 {
			return tok, true
		}
	}
	return nil, false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares b and the lower-case ASCII s, ignoring b's case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
