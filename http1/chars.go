package http1

import (
	"math/bits"
	"unsafe"
)

// Byte classes, one table lookup per byte where SWAR cannot help.
const (
	classToken  = 1 << iota // tchar, RFC 9110 §5.6.2
	classTarget             // bytes allowed in a request-target: VCHAR (0x21-0x7E), RFC 9112 §3.2
)

var byteClass = func() (t [256]uint8) {
	for c := 0x21; c < 0x7F; c++ {
		t[c] |= classTarget
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= classToken
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= classToken
		t[c-'a'+'A'] |= classToken
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] |= classToken
	}
	return t
}()

// tokenTable is the classToken column of byteClass as bools: one load
// and a compare per byte on the hottest loop, the field-name scan.
var tokenTable = func() (t [256]bool) {
	for c := range t {
		t[c] = byteClass[c]&classToken != 0
	}
	return t
}()

func isToken(c byte) bool { return tokenTable[c] }

// lowerTable maps ASCII upper case to lower case and every other byte to
// itself.
var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c + 'a' - 'A')
	}
	return t
}()

// SWAR ("SIMD within a register"): eight bytes tested at once in a uint64,
// loaded little-endian (the byte at the lowest address is the lowest lane;
// every platform m0serve builds for is little-endian).
// For each test the lowest flagged lane is exact; lanes above a flagged one
// may be false positives (a borrow), which is why callers take only the
// first flagged lane and never count them.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// lanesBelow flags lanes whose byte is < n (n <= 0x80).
func lanesBelow(x uint64, n byte) uint64 { return (x - lanes01*uint64(n)) & ^x & lanes80 }

// lanesEqual flags lanes whose byte is c.
func lanesEqual(x uint64, c byte) uint64 {
	y := x ^ (lanes01 * uint64(c))
	return (y - lanes01) & ^y & lanes80
}

// firstLane turns a non-zero flag word into the index of its lowest lane.
func firstLane(flags uint64) int { return bits.TrailingZeros64(flags) >> 3 }

// scanControl returns the index of the first control byte (0x00-0x1F or
// 0x7F: CTL in RFC 5234) at or after i, or len(b) if there is none. A
// field line's end (CR or LF), an HTAB and every byte a field value may not
// hold are all CTLs, so one scan finds the line end and validates the value.
func scanControl(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	// Word loads through a pointer: the slice form (b[i:], then
	// binary.LittleEndian) costs twice the instructions per word in bounds
	// checks and slice arithmetic. Every load stays inside b: it is taken
	// only while i+8 <= len(b).
	base := unsafe.Pointer(unsafe.SliceData(b))
	for ; i+8 <= len(b); i += 8 {
		x := *(*uint64)(unsafe.Add(base, i))
		if f := lanesBelow(x, 0x20) | lanesEqual(x, 0x7F); f != 0 {
			return i + firstLane(f)
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == 0x7F {
			return i
		}
	}
	return len(b)
}

// scanTarget returns the index of the first byte at or after i that cannot
// be part of a request-target (anything but 0x21-0x7E), or len(b).
func scanTarget(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	base := unsafe.Pointer(unsafe.SliceData(b))
	for ; i+8 <= len(b); i += 8 {
		x := *(*uint64)(unsafe.Add(base, i))
		if f := lanesBelow(x, 0x21) | (x & lanes80) | lanesEqual(x, 0x7F); f != 0 {
			return i + firstLane(f)
		}
	}
	for ; i < len(b); i++ {
		if byteClass[b[i]]&classTarget == 0 {
			return i
		}
	}
	return len(b)
}

// scanToken returns the index of the first non-tchar byte at or after i.
func scanToken(b []byte, i int) int {
	// Four bytes a round through a pointer: field names average about a
	// dozen bytes, and this form has no bounds check and a quarter of the
	// loop branches of the plain one.
	base := unsafe.Pointer(unsafe.SliceData(b))
	for ; i+4 <= len(b); i += 4 {
		p := unsafe.Add(base, i)
		if !tokenTable[*(*byte)(p)] {
			return i
		}
		if !tokenTable[*(*byte)(unsafe.Add(p, 1))] {
			return i + 1
		}
		if !tokenTable[*(*byte)(unsafe.Add(p, 2))] {
			return i + 2
		}
		if !tokenTable[*(*byte)(unsafe.Add(p, 3))] {
			return i + 3
		}
	}
	for ; i < len(b); i++ {
		if !tokenTable[b[i]] {
			return i
		}
	}
	return len(b)
}

// ValidFieldName reports whether name is a non-empty token (RFC 9110 §5.1).
func ValidFieldName(name []byte) bool {
	return len(name) > 0 && scanToken(name, 0) == len(name)
}

// ValidFieldValue reports whether value may be sent as a field value: no
// CTL but HTAB (RFC 9110 §5.5; CR, LF and NUL above all, which would split
// or end the head), and no leading or trailing whitespace.
func ValidFieldValue(value []byte) bool {
	for i := scanControl(value, 0); i < len(value); i = scanControl(value, i+1) {
		if value[i] != '\t' {
			return false
		}
	}
	if n := len(value); n > 0 && (isSpace(value[0]) || isSpace(value[n-1])) {
		return false
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// EqualFold reports whether b equals lower, ignoring ASCII case in b;
// lower must already be lower case. The one case-insensitive compare of
// field names and tokens for every package of the server.
func EqualFold[T string | []byte](b T, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lowerTable[b[i]] != lower[i] {
			return false
		}
	}
	return true
}

// hexValue returns the value of a hex digit, or 0xFF for any other byte.
func hexValue(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0xFF
}
