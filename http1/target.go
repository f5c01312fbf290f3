package http1

var errPercent = &Error{400, "invalid percent-encoding in request-target"}

// splitTarget classifies the request-target (RFC 9112 §3.2) and splits its
// path from its query. The target's bytes are already known to be VCHARs.
func (r *Request) splitTarget(buf []byte) error {
	target := r.Target.In(buf)
	start := int(r.Target.Start)
	for _, c := range target {
		if c == '#' {
			// A fragment is never part of a request-target (§3.2); a
			// client that sends one is broken or probing.
			return errTarget
		}
	}
	connect := r.MethodIs("CONNECT")
	switch {
	case target[0] == '/' && !connect:
		r.Form = FormOrigin
		r.splitPathQuery(start, start+len(target), buf)
	case len(target) == 1 && target[0] == '*':
		// §3.2.4: asterisk-form is only for a server-wide OPTIONS.
		if !r.MethodIs("OPTIONS") {
			return errAsterisk
		}
		r.Form = FormAsterisk
	case connect:
		// §3.2.3: CONNECT takes authority-form, host ":" port.
		if !isAuthorityForm(target) {
			return errAuthority
		}
		r.Form = FormAuthority
	default:
		// §3.2.2: absolute-form, scheme "://" authority path-abempty.
		n := schemeLength(target)
		if n == 0 || len(target) < n+3 || string(target[n:n+3]) != "://" {
			return errTarget
		}
		pathStart := start + n + 3
		for pathStart < start+len(target) && buf[pathStart] != '/' && buf[pathStart] != '?' {
			pathStart++
		}
		if pathStart == start+n+3 {
			return errTarget // empty authority
		}
		r.Form = FormAbsolute
		r.splitPathQuery(pathStart, start+len(target), buf)
	}
	return nil
}

func (r *Request) splitPathQuery(start, end int, buf []byte) {
	q := start
	for q < end && buf[q] != '?' {
		q++
	}
	r.Path = Span{uint32(start), uint32(q)}
	if q < end {
		r.Query = Span{uint32(q + 1), uint32(end)}
	} else {
		r.Query = Span{uint32(end), uint32(end)}
	}
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

// isAuthorityForm accepts uri-host ":" port with a non-empty host, no
// userinfo and no path.
func isAuthorityForm(b []byte) bool {
	colon := -1
	for i, c := range b {
		switch c {
		case '/', '?', '@':
			return false
		case ':':
			colon = i
		}
	}
	if colon <= 0 || colon == len(b)-1 {
		return false
	}
	for _, c := range b[colon+1:] {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

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
		hi, lo := unhex(src[i+1]), unhex(src[i+2])
		if hi > 15 || lo > 15 {
			return dst, errPercent
		}
		dst = append(dst, hi<<4|lo)
		i += 2
	}
	return dst, nil
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}
