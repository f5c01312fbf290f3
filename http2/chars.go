package http2

// The byte classes of a request head's parts, one table lookup a byte:
// what RFC 9113 §8.2.1 and §8.3.1 allow in each, and nothing that could
// end or split a line of an HTTP/1.1 head (CR, LF, NUL), so that no
// field, however the layers above read it, holds more than it says.
const (
	classToken      = 1 << iota // tchar, RFC 9110 §5.6.2: a method, a :protocol
	classLowerToken             // tchar without upper case: a field name (§8.2.1)
	classPath                   // VCHAR but '#': a request-target's bytes (RFC 9112 §3.2)
	classAuthority              // host and port: unreserved, sub-delims, '%', ':', '[', ']' (RFC 3986 §3.2)
	classScheme                 // ALPHA, DIGIT, '+', '-', '.' (RFC 3986 §3.1)
	classValue                  // a field value's: anything but a CTL other than HTAB (RFC 9110 §5.5)
)

var charClass = func() (t [256]uint8) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] |= classPath
	}
	t['#'] &^= classPath
	for c := 0; c < 256; c++ {
		if c >= 0x20 && c != 0x7f || c == '\t' {
			t[c] |= classValue
		}
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= classToken | classLowerToken | classAuthority | classScheme
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= classToken | classLowerToken | classAuthority | classScheme
		t[c-'a'+'A'] |= classToken | classAuthority | classScheme
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] |= classToken | classLowerToken
	}
	for _, c := range "-._~!$&'()*+,;=%:[]" {
		t[c] |= classAuthority
	}
	for _, c := range "+-." {
		t[c] |= classScheme
	}
	return t
}()

// all says whether s is non-empty and every byte of it is of class.
func all(s string, class uint8) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if charClass[s[i]]&class == 0 {
			return false
		}
	}
	return true
}

// validValue says whether v may be a field value (§8.2.1): no NUL, CR,
// LF or other control but HTAB, and no white space at its ends.
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if charClass[v[i]]&classValue == 0 {
			return false
		}
	}
	n := len(v)
	return n == 0 || v[0] != ' ' && v[0] != '\t' && v[n-1] != ' ' && v[n-1] != '\t'
}

// equalFold compares two ASCII strings ignoring case (a host's).
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
