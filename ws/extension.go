package ws

// Sec-WebSocket-Extensions (RFC 6455 §9.1):
//
//	extension-list  = 1#extension
//	extension       = extension-token *( ";" extension-param )
//	extension-param = token [ "=" (token / quoted-string) ]
//
// A quoted value must be a token once unquoted.

// Extensions walks the offers of Sec-WebSocket-Extensions values in order.
// Use Next until it returns false, then Err.
type Extensions struct {
	values [][]byte
	rest   []byte
	err    bool
}

// ExtensionParams walks one offer's parameters.
type ExtensionParams struct{ rest []byte }

// ParseExtensions returns a walker over the offers in values.
func ParseExtensions(values [][]byte) Extensions { return Extensions{values: values} }

// Next returns the next offer's name and parameters.
func (e *Extensions) Next() (name []byte, params ExtensionParams, ok bool) {
	for !e.err {
		e.rest = skipSpace(e.rest)
		if len(e.rest) == 0 {
			if len(e.values) == 0 {
				return nil, params, false
			}
			e.rest, e.values = e.values[0], e.values[1:]
			continue
		}
		if e.rest[0] == ',' {
			e.rest = e.rest[1:]
			continue
		}
		name, e.rest = scanToken(e.rest)
		if len(name) == 0 {
			e.err = true
			break
		}
		// The parameters run to the next comma outside a quoted string;
		// check their syntax now so that ExtensionParams cannot fail.
		start := e.rest
		p := ExtensionParams{rest: e.rest}
		for {
			_, _, _, ok, bad := p.scan()
			if bad {
				e.err = true
				return nil, params, false
			}
			if !ok {
				break
			}
		}
		params.rest = start[:len(start)-len(p.rest)]
		e.rest = p.rest
		if len(e.rest) > 0 && e.rest[0] != ',' {
			e.err = true
			break
		}
		return name, params, true
	}
	return nil, params, false
}

// Err reports whether the values were malformed (Next stops there).
func (e *Extensions) Err() bool { return e.err }

// Next returns the next parameter: its name, its value (unquoted), and
// whether it had one.
func (p *ExtensionParams) Next() (name, value []byte, hasValue, ok bool) {
	name, value, hasValue, ok, _ = p.scan()
	return name, value, hasValue, ok
}

func (p *ExtensionParams) scan() (name, value []byte, hasValue, ok, bad bool) {
	r := skipSpace(p.rest)
	if len(r) == 0 || r[0] == ',' {
		p.rest = r
		return nil, nil, false, false, false
	}
	if r[0] != ';' {
		return nil, nil, false, false, true
	}
	r = skipSpace(r[1:])
	name, r = scanToken(r)
	if len(name) == 0 {
		return nil, nil, false, false, true
	}
	r = skipSpace(r)
	if len(r) > 0 && r[0] == '=' {
		hasValue = true
		r = skipSpace(r[1:])
		if len(r) > 0 && r[0] == '"' {
			// quoted-string whose content must be a token: no escapes needed
			end := 1
			for end < len(r) && r[end] != '"' {
				end++
			}
			if end == len(r) {
				return nil, nil, false, false, true
			}
			value = r[1:end]
			if tok, rest := scanToken(value); len(rest) != 0 || len(tok) == 0 {
				return nil, nil, false, false, true
			}
			r = r[end+1:]
		} else {
			value, r = scanToken(r)
			if len(value) == 0 {
				return nil, nil, false, false, true
			}
		}
	}
	p.rest = r
	return name, value, hasValue, true, false
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// scanToken splits b after its leading token (RFC 9110 §5.6.2).
func scanToken(b []byte) (token, rest []byte) {
	i := 0
	for i < len(b) && isTokenChar[b[i]] {
		i++
	}
	return b[:i], b[i:]
}

var isTokenChar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// The answers to an accepted permessage-deflate offer: the server always
// imposes no context takeover both ways (RFC 7692 §7.1.1), so one
// compressor and one decompressor serve every connection of a thread.
const (
	deflateResponse       = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
	deflateResponseWindow = deflateResponse + "; server_max_window_bits=15"
)

// negotiateDeflate picks the first permessage-deflate offer the server can
// accept (RFC 7692 §5.1, §7.1) and returns the response value, or "" when
// none. An offer with an unknown or repeated parameter or a bad value is
// declined (§7.1: the server must not accept it), as is one asking for a
// server window under 15 bits: the compressor uses the full 32 KiB window.
// client_max_window_bits needs no answer: the inflater takes any window.
func negotiateDeflate(values [][]byte) (string, error) {
	list := ParseExtensions(values)
	for name, params, ok := list.Next(); ok; name, params, ok = list.Next() {
		if !equalFold(name, "permessage-deflate") {
			continue
		}
		if answer, ok := acceptDeflate(params); ok {
			return answer, nil
		}
	}
	if list.Err() {
		return "", ErrExtensionList
	}
	return "", nil
}

func acceptDeflate(params ExtensionParams) (answer string, ok bool) {
	var seen [4]bool
	answer = deflateResponse
	for name, value, hasValue, more := params.Next(); more; name, value, hasValue, more = params.Next() {
		var i int
		switch {
		case equalFold(name, "server_no_context_takeover"):
			if hasValue {
				return "", false
			}
		case equalFold(name, "client_no_context_takeover"):
			i = 1
			if hasValue {
				return "", false
			}
		case equalFold(name, "server_max_window_bits"):
			i = 2
			bits, valid := windowBits(value)
			if !hasValue || !valid || bits != 15 {
				return "", false
			}
			answer = deflateResponseWindow
		case equalFold(name, "client_max_window_bits"):
			i = 3
			if _, valid := windowBits(value); hasValue && !valid {
				return "", false
			}
		default:
			return "", false
		}
		if seen[i] {
			return "", false
		}
		seen[i] = true
	}
	return answer, true
}

// windowBits parses a window size parameter: 8 to 15, no leading zero
// (RFC 7692 §7.1.2).
func windowBits(v []byte) (int, bool) {
	switch {
	case len(v) == 1 && v[0] >= '8' && v[0] <= '9':
		return int(v[0] - '0'), true
	case len(v) == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5':
		return 10 + int(v[1]-'0'), true
	}
	return 0, false
}
