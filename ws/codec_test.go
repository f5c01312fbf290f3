package ws

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func unmaskBytewise(b []byte, key [4]byte, offset int64) {
	for i := range b {
		b[i] ^= key[(offset+int64(i))&3]
	}
}

// TestUnmask checks the word-wise unmasking against the byte-wise
// definition (§5.3) at every length, offset and split.
func TestUnmask(t *testing.T) {
	src := make([]byte, 100)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	for n := 0; n <= len(src); n++ {
		for offset := int64(0); offset < 8; offset++ {
			got := append([]byte(nil), src[:n]...)
			want := append([]byte(nil), src[:n]...)
			Unmask(got, testMask, offset)
			unmaskBytewise(want, testMask, offset)
			if !bytes.Equal(got, want) {
				t.Fatalf("length %d offset %d: differ", n, offset)
			}
		}
		for cut := 0; cut <= n; cut++ {
			got := append([]byte(nil), src[:n]...)
			want := append([]byte(nil), src[:n]...)
			Unmask(got[:cut], testMask, 0)
			Unmask(got[cut:], testMask, int64(cut))
			unmaskBytewise(want, testMask, 0)
			if !bytes.Equal(got, want) {
				t.Fatalf("length %d split at %d: differ", n, cut)
			}
		}
	}
}

var utf8Cases = []string{
	"", "hello", "κόσμε", "€", "\U0010ffff", "\U00010000", "\u07ff", "\u0800", "\xed\x9f\xbf", "\xee\x80\x80",
	strings.Repeat("a", 17) + "é" + strings.Repeat("b", 9),
	"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xc2", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xed\xbf\xbf",
	"\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xfe", "\xe2\x82", "\xf0\x9f\x98",
	"abc\xed\xa0\x80def", strings.Repeat("x", 8) + "\xc3\x28", "\xef\xbb\xbf",
}

// TestUTF8 checks the incremental validator against unicode/utf8 whole
// and at every split.
func TestUTF8(t *testing.T) {
	for _, s := range utf8Cases {
		want := utf8.ValidString(s)
		for cut := 0; cut <= len(s); cut++ {
			var v UTF8
			ok := v.Write([]byte(s[:cut])) && v.Write([]byte(s[cut:])) && v.Complete()
			if ok != want {
				t.Errorf("%q split at %d: valid=%v, want %v", s, cut, ok, want)
			}
		}
	}
	// Fail-fast: a bad prefix fails before the text ends.
	var v UTF8
	if v.Write([]byte("ok\xed\xa0")) {
		t.Error("surrogate prefix accepted")
	}
	if v.Write([]byte("fine")) {
		t.Error("validator recovered after failing")
	}
}

// TestEncode checks header lengths at each boundary (§5.2: the fewest
// bytes), and that the decoder reads back what the encoder wrote.
func TestEncode(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 127, 65535, 65536, 70000} {
		payload := bytes.Repeat([]byte{'z'}, n)
		out := AppendFrame(nil, OpBinary, true, payload)
		if h := HeaderLen(int64(n)); len(out) != h+n {
			t.Fatalf("length %d: frame of %d bytes, header %d", n, len(out), h)
		}
		if out[0] != 0x82 || out[1]&bitMasked != 0 {
			t.Fatalf("length %d: first bytes %x", n, out[:2])
		}
		// Mask it as a client would and decode.
		masked := maskServerFrame(out)
		got := readAll(masked, 0)
		if len(got) != 1 || got[0].op != OpBinary || got[0].payload != string(payload) {
			t.Fatalf("length %d: read back %v", n, got)
		}
	}
	if out := AppendHeader(nil, OpText, false, true, 3); out[0] != 0x41 {
		t.Fatalf("rsv1 not fin: %x", out[0])
	}
}

// maskServerFrame turns an unmasked frame into the masked frame a client
// would send.
func maskServerFrame(f []byte) []byte {
	h := serverHeaderLen(f)
	out := append([]byte(nil), f[:h]...)
	out[1] |= bitMasked
	out = append(out, testMask[:]...)
	start := len(out)
	out = append(out, f[h:]...)
	Unmask(out[start:], testMask, 0)
	return out
}

// TestClose checks the close frame builder: §7.4's never-sent codes give
// an empty payload, reasons are cut to 123 bytes on a UTF-8 boundary.
func TestClose(t *testing.T) {
	cases := []struct {
		code    CloseCode
		reason  string
		payload string
	}{
		{1000, "", "\x03\xe8"},
		{1001, "bye", "\x03\xe9bye"},
		{4001, "x", "\x0f\xa1x"},
		{CloseNoStatus, "ignored", ""},
		{CloseAbnormal, "", ""},
		{CloseTLSHandshake, "", ""},
		{1004, "", ""},
		{1000, "\xff", "\x03\xe8"},
		{1000, strings.Repeat("a", 200), "\x03\xe8" + strings.Repeat("a", 123)},
		{1000, strings.Repeat("a", 122) + "é", "\x03\xe8" + strings.Repeat("a", 122)},
	}
	for _, c := range cases {
		frame := AppendClose(nil, c.code, c.reason)
		if frame[0] != 0x88 || int(frame[1]) != len(frame)-2 || string(frame[2:]) != c.payload {
			t.Errorf("%d %q: frame %q", c.code, c.reason, frame)
		}
		got := readAll(maskServerFrame(frame), 0)
		if len(got) != 1 || got[0].err != nil {
			t.Errorf("%d %q: reads back as %v", c.code, c.reason, got)
		}
	}
}

// serverHeaderLen is the header length of an unmasked frame.
func serverHeaderLen(f []byte) int {
	switch f[1] & maskLen {
	case 126:
		return 4
	case 127:
		return 10
	}
	return 2
}
