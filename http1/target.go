package http1

import (
	"bytes"
	"strings"
)

var (
	errPercent   = &Error{400, "invalid percent-encoding in request-target"}
	errNULInPath = &Error{400, "encoded NUL (%00) in the path"}
)

// splitTarget classifies the request-target (RFC 9112 §3.2) and splits its
// path from its query. The target's bytes are already known to be VCHARs.
func (r *Request) splitTarget(buf []byte) error {
	target := r.Target.In(buf)
	start := int(r.Target.Start)
	if bytes.IndexByte(target, '#') >= 0 {
		// A fragment is never part of a request-target (§3.2); a client
		// that sends one is broken or probing.
		return errTarget
	}
	connect := r.MethodIs("CONNECT")
	switch {
	case target[0] == '/' && !connect:
		r.Form = FormOrigin
		return r.splitPathQuery(start, start+len(target), buf)
	case len(target) == 1 && target[0] == '*':
		// §3.2.4: asterisk-form is only for a server-wide OPTIONS.
		if !r.MethodIs("OPTIONS") {
			return errAsterisk
		}
		r.Form = FormAsterisk
		// The path is "*", as uvicorn's scope and gunicorn's PATH_INFO
		// have it: an empty one reads as the root's.
		r.Path = r.Target
		r.Query = Span{r.Target.End, r.Target.End}
	case connect:
		// §3.2.3: CONNECT takes authority-form, host ":" port.
		if !isAuthority(target, true) {
			return errAuthority
		}
		r.Form = FormAuthority
		r.Authority = r.Target
	default:
		// §3.2.2: absolute-form, scheme "://" authority path-abempty.
		n := schemeLength(target)
		if n == 0 || len(target) < n+3 || string(target[n:n+3]) != "://" {
			return errTarget
		}
		if !isHTTPScheme(target[:n]) {
			// An origin server answers http and https URIs only (RFC
			// 9110 §4.2); nginx refuses ftp:// and the like with 400.
			return errScheme
		}
		pathStart := start + n + 3
		for pathStart < start+len(target) && buf[pathStart] != '/' && buf[pathStart] != '?' {
			pathStart++
		}
		if !isAuthority(buf[start+n+3:pathStart], false) {
			return errTarget
		}
		r.Form = FormAbsolute
		r.Authority = Span{uint32(start + n + 3), uint32(pathStart)}
		return r.splitPathQuery(pathStart, start+len(target), buf)
	}
	return nil
}

func (r *Request) splitPathQuery(start, end int, buf []byte) error {
	q := end
	if i := bytes.IndexByte(buf[start:end], '?'); i >= 0 {
		q = start + i
	}
	if bytes.Contains(buf[start:q], nulEscape) {
		// A decoded NUL ends a C string early in whatever reads the path
		// next (a file name, a legacy app); nginx refuses it the same way.
		return errNULInPath
	}
	r.Path = Span{uint32(start), uint32(q)}
	if q < end {
		r.Query = Span{uint32(q + 1), uint32(end)}
	} else {
		r.Query = Span{uint32(end), uint32(end)}
	}
	return nil
}

var nulEscape = []byte("%00")

var errScheme = &Error{400, "absolute-form target with a scheme other than http or https"}

// isHTTPScheme reports whether scheme is http or https, in any case.
func isHTTPScheme(scheme []byte) bool {
	if len(scheme) != 4 && len(scheme) != 5 {
		return false
	}
	for i, c := range scheme[:4] {
		if lowerTable[c] != "http"[i] {
			return false
		}
	}
	return len(scheme) == 4 || lowerTable[scheme[4]] == 's'
}

// schemeLength returns the length of a leading URI scheme,
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 §3.1), or 0.
func schemeLength(b []byte) int {
	if len(b) == 0 || lowerTable[b[0]] < 'a' || lowerTable[b[0]] > 'z' {
		return 0
	}
	i := 1
	for i < len(b) {
		c := lowerTable[b[i]]
		if !(c >= 'a' && c <= 'z' || isDigit(c) || c == '+' || c == '-' || c == '.') {
			break
		}
		i++
	}
	return i
}

// isAuthority accepts host [":" port] (RFC 3986 §3.2), the port required
// when needPort. The host is an IP-literal in brackets or a reg-name.
// Userinfo is refused: RFC 9110 §4.2.4 has recipients treat it as an error.
func isAuthority(b []byte, needPort bool) bool {
	host := b
	port := []byte(nil)
	if len(b) > 0 && b[0] == '[' {
		end := 1
		for end < len(b) && b[end] != ']' {
			if !(isHexDigit(b[end]) || b[end] == ':' || b[end] == '.') {
				return false
			}
			end++
		}
		if end == len(b) || end == 1 {
			return false
		}
		host, port = b[:end+1], b[end+1:]
		if len(port) > 0 && port[0] != ':' {
			return false
		}
	} else {
		for i, c := range b {
			if c == ':' {
				host, port = b[:i], b[i:]
				break
			}
			if !isRegNameByte(c) {
				return false
			}
		}
	}
	if len(host) == 0 {
		return false
	}
	if len(port) == 0 {
		return !needPort
	}
	if len(port) == 1 {
		return false
	}
	for _, c := range port[1:] {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// isHost accepts a Host field value (RFC 9112 §3.2): uri-host [":" port],
// or nothing when the target has no authority. A comma is refused although
// reg-name allows it: Host is a singleton field, and a comma is how two
// values look once a proxy has joined them (RFC 9110 §5.3).
func isHost(b []byte, targetHasAuthority bool) bool {
	if len(b) == 0 {
		return !targetHasAuthority
	}
	return bytes.IndexByte(b, ',') < 0 && isAuthority(b, false)
}

// isRegNameByte: unreserved, pct-encoded's '%', or sub-delims (RFC 3986 §3.2.2).
func isRegNameByte(c byte) bool {
	l := lowerTable[c]
	return l >= 'a' && l <= 'z' || isDigit(c) || strings.IndexByte("-._~%!$&'()*+,;=", c) >= 0
}

func isHexDigit(c byte) bool { return hexValue(c) < 16 }

// DecodePath appends the percent-decoded form of src (RFC 3986 §2.1) to
// dst and returns it. A '%' not followed by two hex digits is a 400. '+'
// stays '+': it means a space only in form-encoded queries, never in a path.
func DecodePath(dst, src []byte) ([]byte, error) {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		if i+2 >= len(src) {
			return dst, errPercent
		}
		hi, lo := hexValue(src[i+1]), hexValue(src[i+2])
		if hi > 15 || lo > 15 {
			return dst, errPercent
		}
		dst = append(dst, hi<<4|lo)
		i += 2
	}
	return dst, nil
}
