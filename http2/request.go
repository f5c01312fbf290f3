package http2

import (
	"strconv"

	"golang.org/x/net/http2/hpack"
)

// Request is a stream's request head, as the client sent it.
type Request struct {
	Method    string
	Scheme    string
	Authority string
	Path      string
	// Protocol is :protocol of an extended CONNECT (RFC 8441 §4), such as
	// "websocket"; empty otherwise.
	Protocol string
	// Fields are the regular fields in the order received, names in
	// lower case (§8.2.1), cookies not yet joined (§8.2.3).
	Fields []hpack.HeaderField
	// ContentLength is content-length's value, -1 when absent. DATA that
	// does not add up to it resets the stream (§8.1.1).
	ContentLength int64
}

func (r *Request) reset() {
	*r = Request{Fields: r.Fields[:0], ContentLength: -1}
}

// malformed is a stream error for a request that breaks §8.1.1 or §8.3.
func malformed(stream uint32, reason string) error {
	return &streamError{stream: stream, code: ErrCodeProtocol, reason: reason}
}

// parseRequest validates a decoded header block as a request head
// (§8.3.1) and fills r from it: each pseudo-header's value by its own
// grammar, each regular field by §8.2's rules. Nothing that is not a
// token, a target, an authority or a field value as RFC 9110 has them
// gets through, so a layer above that writes the head out as text
// cannot be made to write more than one line of it per field.
func parseRequest(stream uint32, fields []hpack.HeaderField, extendedConnect bool, r *Request) error {
	r.reset()
	regular := false
	host := ""
	for _, f := range fields {
		if f.IsPseudo() {
			if regular {
				return malformed(stream, "pseudo-header after a regular field")
			}
			var slot *string
			switch f.Name {
			case ":method":
				slot = &r.Method
			case ":scheme":
				slot = &r.Scheme
			case ":authority":
				slot = &r.Authority
			case ":path":
				slot = &r.Path
			case ":protocol":
				if !extendedConnect {
					return malformed(stream, ":protocol without SETTINGS_ENABLE_CONNECT_PROTOCOL")
				}
				slot = &r.Protocol
			default:
				return malformed(stream, "unknown pseudo-header")
			}
			if *slot != "" || f.Value == "" {
				return malformed(stream, "repeated or empty pseudo-header")
			}
			*slot = f.Value
			continue
		}
		regular = true
		if err := checkField(stream, f); err != nil {
			return err
		}
		if f.Name == "host" {
			if host != "" {
				return malformed(stream, "more than one host field")
			}
			host = f.Value
		}
		if f.Name == "content-length" {
			n, err := strconv.ParseUint(f.Value, 10, 63)
			if err != nil || (r.ContentLength >= 0 && int64(n) != r.ContentLength) {
				return malformed(stream, "bad content-length")
			}
			r.ContentLength = int64(n)
		}
		r.Fields = append(r.Fields, f)
	}
	if r.Method != "" && !all(r.Method, classToken) {
		return malformed(stream, ":method not a token")
	}
	if r.Authority != "" && !all(r.Authority, classAuthority) {
		// Userinfo ("@") is refused too (§8.3.1).
		return malformed(stream, ":authority not a host and port")
	}
	if r.Authority != "" && host != "" && !equalFold(r.Authority, host) {
		// The two name one origin or the request is a smuggling attempt
		// (§8.3.1).
		return malformed(stream, "host differs from :authority")
	}
	if r.Method == "CONNECT" && r.Protocol == "" {
		// Plain CONNECT names only an authority (§8.5).
		if r.Scheme != "" || r.Path != "" || r.Authority == "" {
			return malformed(stream, "CONNECT with :scheme or :path, or without :authority")
		}
		return nil
	}
	if r.Protocol != "" && r.Method != "CONNECT" {
		return malformed(stream, ":protocol on a method other than CONNECT")
	}
	if r.Method == "" || r.Scheme == "" || r.Path == "" {
		return malformed(stream, "missing :method, :scheme or :path")
	}
	if r.Path[0] != '/' && !(r.Path == "*" && r.Method == "OPTIONS") {
		return malformed(stream, ":path neither absolute nor * for OPTIONS")
	}
	if !all(r.Path, classPath) {
		return malformed(stream, ":path with a byte a request-target may not hold")
	}
	if !all(r.Scheme, classScheme) {
		return malformed(stream, ":scheme not a URI scheme")
	}
	if r.Protocol != "" && !all(r.Protocol, classToken) {
		return malformed(stream, ":protocol not a token")
	}
	return nil
}

// parseTrailers validates a trailer block: regular fields only (§8.1).
func parseTrailers(stream uint32, fields []hpack.HeaderField, into []hpack.HeaderField) ([]hpack.HeaderField, error) {
	into = into[:0]
	for _, f := range fields {
		if f.IsPseudo() {
			return into, malformed(stream, "pseudo-header in trailers")
		}
		if err := checkField(stream, f); err != nil {
			return into, err
		}
		into = append(into, f)
	}
	return into, nil
}

// checkField applies §8.2's rules to one regular field: a lower-case
// token for a name, no NUL, CR or LF in the value and no white space at
// its ends, and none of the fields that are HTTP/1.1's connection
// management (§8.2.2).
func checkField(stream uint32, f hpack.HeaderField) error {
	if !all(f.Name, classLowerToken) {
		return malformed(stream, "field name not a lower-case token")
	}
	v := f.Value
	if !validValue(v) {
		return malformed(stream, "a control character in a field value, or white space around it")
	}
	switch f.Name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return malformed(stream, "connection-specific field")
	case "te":
		if v != "trailers" {
			return malformed(stream, "te other than trailers")
		}
	}
	return nil
}
