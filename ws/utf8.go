package ws

import "encoding/binary"

// UTF8 validates text that arrives in pieces (§8.1): a sequence split
// between two fragments or two reads continues where it stopped, and the
// first byte that cannot be part of valid UTF-8 fails at once, so a bad
// message is refused before the rest of it arrives. The zero value is
// ready at the start of a text.
type UTF8 struct{ state uint8 }

// States between bytes: what the next byte must be. utf8Accept is a
// boundary between whole characters.
const (
	utf8Accept  uint8 = iota
	utf8Need1         // one continuation byte, 80-BF
	utf8Need2         // two continuation bytes
	utf8Need3         // three continuation bytes
	utf8AfterE0       // A0-BF, then one more (no overlong three-byte forms)
	utf8AfterED       // 80-9F, then one more (no surrogates)
	utf8AfterF0       // 90-BF, then two more (no overlong four-byte forms)
	utf8AfterF4       // 80-8F, then two more (nothing above U+10FFFF)
	utf8Reject
)

// utf8Next[state] is the range the next byte must fall in and the state
// after it.
var utf8Next = [utf8Reject]struct{ lo, hi, then uint8 }{
	utf8Need1:   {0x80, 0xbf, utf8Accept},
	utf8Need2:   {0x80, 0xbf, utf8Need1},
	utf8Need3:   {0x80, 0xbf, utf8Need2},
	utf8AfterE0: {0xa0, 0xbf, utf8Need1},
	utf8AfterED: {0x80, 0x9f, utf8Need1},
	utf8AfterF0: {0x90, 0xbf, utf8Need2},
	utf8AfterF4: {0x80, 0x8f, utf8Need2},
}

// utf8Lead is the state after each lead byte (RFC 3629 §4).
var utf8Lead = func() (t [256]uint8) {
	for b := range 256 {
		switch {
		case b < 0x80:
			t[b] = utf8Accept
		case b >= 0xc2 && b <= 0xdf:
			t[b] = utf8Need1
		case b == 0xe0:
			t[b] = utf8AfterE0
		case b == 0xed:
			t[b] = utf8AfterED
		case b >= 0xe1 && b <= 0xef:
			t[b] = utf8Need2
		case b == 0xf0:
			t[b] = utf8AfterF0
		case b >= 0xf1 && b <= 0xf3:
			t[b] = utf8Need3
		case b == 0xf4:
			t[b] = utf8AfterF4
		default:
			t[b] = utf8Reject
		}
	}
	return t
}()

// Write validates the next piece of text. It returns false once the text
// can no longer be valid UTF-8, whatever follows; the validator then stays
// failed until Reset.
func (v *UTF8) Write(p []byte) bool {
	s := v.state
	i := 0
	for i < len(p) {
		if s == utf8Accept {
			// ASCII runs, eight bytes at a time.
			for i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:])&0x8080808080808080 == 0 {
				i += 8
			}
			if i == len(p) {
				break
			}
			s = utf8Lead[p[i]]
			i++
			continue
		}
		if s == utf8Reject {
			break
		}
		n := &utf8Next[s]
		if c := p[i]; c < n.lo || c > n.hi {
			s = utf8Reject
			break
		}
		s = n.then
		i++
	}
	v.state = s
	return s != utf8Reject
}

// Complete reports whether the text so far ends on a character boundary:
// at the end of a message it must.
func (v *UTF8) Complete() bool { return v.state == utf8Accept }

// Reset readies the validator for a new text.
func (v *UTF8) Reset() { v.state = utf8Accept }
