package grant

import "bytes"

// FromQuery finds the grant in a request's query: the last g=, percent-
// decoded into dst (cap MaxLen or more; a longer one comes back cut to
// MaxLen+1, which Verify calls malformed). found is false without a g=.
func FromQuery(dst, query []byte) (grant []byte, found bool) {
	for len(query) > 0 {
		pair := query
		if i := bytes.IndexByte(query, '&'); i >= 0 {
			pair, query = query[:i], query[i+1:]
		} else {
			query = nil
		}
		if len(pair) >= 2 && pair[0] == 'g' && pair[1] == '=' {
			grant, found = unescape(dst[:0], pair[2:]), true
		}
	}
	return grant, found
}

// unescape appends value percent-decoded (and '+' as a space, as a form
// does) to dst, stopping past MaxLen.
func unescape(dst, value []byte) []byte {
	for i := 0; i < len(value) && len(dst) <= MaxLen; i++ {
		c := value[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%' && i+2 < len(value) && unhex(value[i+1]) >= 0 && unhex(value[i+2]) >= 0:
			c = byte(unhex(value[i+1])<<4 | unhex(value[i+2]))
			i += 2
		}
		dst = append(dst, c)
	}
	return dst
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// CookieValue finds cookie name in a Cookie field's value ("a=1; b=2",
// RFC 6265 §4.2.1), as sent: quotes are part of the value.
func CookieValue(field []byte, name string) (value []byte, found bool) {
	for len(field) > 0 {
		pair := field
		if i := bytes.IndexByte(field, ';'); i >= 0 {
			pair, field = field[:i], field[i+1:]
		} else {
			field = nil
		}
		pair = bytes.Trim(pair, " \t")
		if len(pair) > len(name) && pair[len(name)] == '=' && string(pair[:len(name)]) == name {
			return pair[len(name)+1:], true
		}
	}
	return nil, false
}
