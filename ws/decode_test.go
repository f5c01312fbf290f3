package ws

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func readAll(stream []byte, maxMessage int64) []got {
	r := &Reader{Decoder: Decoder{MaxMessage: maxMessage}}
	return feedAll(r, stream, nil)
}

// TestFramingRules checks each rule of §5 both ways: a stream that keeps it
// gives its messages, one that breaks it fails with the rule's error.
func TestFramingRules(t *testing.T) {
	long := strings.Repeat("x", 126)
	cases := []struct {
		name   string
		stream []byte
		want   []got
	}{
		{"text", frames(text("hello", true)), []got{{op: OpText, payload: "hello"}}},
		{"binary", frames(frameSpec{op: OpBinary, fin: true, payload: []byte{0, 1, 2}}), []got{{op: OpBinary, payload: "\x00\x01\x02"}}},
		{"empty text", frames(text("", true)), []got{{op: OpText}}},
		{"16-bit length", frames(text(long, true)), []got{{op: OpText, payload: long}}},
		{"64-bit length", frames(frameSpec{op: OpBinary, fin: true, payload: make([]byte, 70000)}), []got{{op: OpBinary, payload: string(make([]byte, 70000))}}},
		{"fragments", frames(text("he", false), cont("l", false), cont("lo", true)), []got{{op: OpText, payload: "hello"}}},
		{"empty fragments", frames(text("", false), cont("", false), cont("a", true)), []got{{op: OpText, payload: "a"}}},
		{"ping between fragments", frames(text("he", false), frameSpec{op: OpPing, fin: true, payload: []byte("p")}, cont("llo", true)),
			[]got{{op: OpPing, payload: "p"}, {op: OpText, payload: "hello"}}},
		{"pong", frames(frameSpec{op: OpPong, fin: true, payload: []byte("unsolicited")}), []got{{op: OpPong, payload: "unsolicited"}}},
		{"ping 125 bytes", frames(frameSpec{op: OpPing, fin: true, payload: bytes.Repeat([]byte("p"), 125)}), []got{{op: OpPing, payload: strings.Repeat("p", 125)}}},
		{"close with code", frames(frameSpec{op: OpClose, fin: true, payload: []byte("\x03\xe8bye")}), []got{{op: OpClose, payload: "\x03\xe8bye", code: 1000}}},
		{"close with a 123-byte reason", frames(frameSpec{op: OpClose, fin: true, payload: []byte("\x0f\xa0" + strings.Repeat("r", 123))}), []got{{op: OpClose, payload: "\x0f\xa0" + strings.Repeat("r", 123), code: 4000}}},
		{"close without code", frames(frameSpec{op: OpClose, fin: true}), []got{{op: OpClose, code: CloseNoStatus}}},

		{"ping with a 16-bit length", append([]byte{0x89, 0x80 | 126, 0, 1}, append(testMask[:], 'p'^testMask[0])...), []got{{op: OpPing, payload: "p"}}},
		{"ping 126 bytes", frames(frameSpec{op: OpPing, fin: true, payload: bytes.Repeat([]byte("p"), 126)}), []got{{err: ErrControlTooLong}}},
		{"fragmented ping", frames(frameSpec{op: OpPing, payload: []byte("p")}), []got{{err: ErrControlFragmented}}},
		{"fragmented close", frames(frameSpec{op: OpClose}), []got{{err: ErrControlFragmented}}},
		{"unmasked", frames(frameSpec{op: OpText, fin: true, unmasked: true, payload: []byte("hi")}), []got{{err: ErrUnmasked}}},
		{"RSV1 without extension", frames(frameSpec{op: OpText, fin: true, rsv: bitRSV1}), []got{{err: ErrReservedBits}}},
		{"RSV2", frames(frameSpec{op: OpText, fin: true, rsv: bitRSV2}), []got{{err: ErrReservedBits}}},
		{"RSV3", frames(frameSpec{op: OpBinary, fin: true, rsv: bitRSV3}), []got{{err: ErrReservedBits}}},
		{"RSV on ping", frames(frameSpec{op: OpPing, fin: true, rsv: bitRSV2}), []got{{err: ErrReservedBits}}},
		{"continuation first", frames(cont("x", true)), []got{{err: ErrContinuationNoMessage}}},
		{"continuation after end", frames(text("a", true), cont("x", true)), []got{{op: OpText, payload: "a"}, {err: ErrContinuationNoMessage}}},
		{"text inside fragments", frames(text("a", false), text("b", true)), []got{{err: ErrContinuationExpected}}},
		{"binary inside fragments", frames(text("a", false), frameSpec{op: OpBinary, fin: true}), []got{{err: ErrContinuationExpected}}},
		{"64-bit length MSB", append([]byte{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0}, testMask[:]...), []got{{err: ErrLengthMSB}}},
		{"close one byte", frames(frameSpec{op: OpClose, fin: true, payload: []byte{3}}), []got{{err: ErrCloseCode}}},
		{"close bad reason", frames(frameSpec{op: OpClose, fin: true, payload: []byte("\x03\xe8\xff")}), []got{{err: ErrCloseReason}}},
		{"text not UTF-8", frames(text("\xc3\x28", true)), []got{{err: ErrInvalidUTF8}}},
		{"text ends mid-character", frames(text("\xe2\x82", true)), []got{{err: ErrInvalidUTF8}}},
		{"binary not UTF-8 is fine", frames(frameSpec{op: OpBinary, fin: true, payload: []byte{0xff}}), []got{{op: OpBinary, payload: "\xff"}}},
		{"UTF-8 split across fragments", frames(text("\xe2", false), cont("\x82", false), cont("\xac", true)), []got{{op: OpText, payload: "€"}}},
	}
	for op := Opcode(3); op <= 0xf; op++ {
		if op.known() {
			continue
		}
		cases = append(cases, struct {
			name   string
			stream []byte
			want   []got
		}{fmt.Sprintf("opcode %#x", byte(op)), frames(frameSpec{op: op, fin: true}), []got{{err: ErrReservedOpcode}}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := readAll(c.stream, 0); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestCloseCodes checks §7.4's codes: which a peer may send.
func TestCloseCodes(t *testing.T) {
	valid := []CloseCode{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999}
	invalid := []CloseCode{0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535}
	for _, code := range valid {
		_, _, err := ParseClose([]byte{byte(code >> 8), byte(code)})
		if err != nil {
			t.Errorf("code %d refused: %v", code, err)
		}
	}
	for _, code := range invalid {
		if _, _, err := ParseClose([]byte{byte(code >> 8), byte(code)}); err != ErrCloseCode {
			t.Errorf("code %d: got %v, want ErrCloseCode", code, err)
		}
	}
}

// TestEverySplit feeds a stream of every kind of frame split at every
// byte, in two pieces and byte by byte: the messages must be the same as
// from one piece.
func TestEverySplit(t *testing.T) {
	stream := frames(
		text("héllo", true),
		frameSpec{op: OpBinary, fin: false, payload: bytes.Repeat([]byte{0xab}, 130)},
		frameSpec{op: OpPing, fin: true, payload: []byte("ping")},
		cont("", false),
		frameSpec{op: OpPong, fin: true},
		frameSpec{op: OpContinuation, fin: true, payload: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		text("\xe2\x82", false), cont("\xac", true),
		frameSpec{op: OpClose, fin: true, payload: []byte("\x0f\xa1going")},
	)
	// A 64-bit length frame: split points inside its 8 length bytes too.
	stream = append(stream, frames(frameSpec{op: OpBinary, fin: true, payload: make([]byte, 65536)})...)
	want := readAll(stream, 0)
	if len(want) != 7 || want[6].op != OpBinary {
		t.Fatalf("one piece gave %d messages: %+v", len(want), want)
	}
	// Past the big frame's first payload bytes every cut is alike.
	for cut := 0; cut <= len(stream)-65536+4; cut++ {
		if got := feedAll(&Reader{}, stream, []int{cut}); !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: got %+v", cut, got)
		}
	}
	cuts := make([]int, 0, len(stream))
	for i := 1; i < len(stream)-65536; i++ {
		cuts = append(cuts, i)
	}
	if got := feedAll(&Reader{}, stream, cuts); !reflect.DeepEqual(got, want) {
		t.Fatalf("byte by byte: got %+v", got)
	}
}

// TestHeaderResumes checks that a header fed a byte at a time is gathered,
// not re-read: each byte is used as it comes, and the chunk comes with the
// first payload byte.
func TestHeaderResumes(t *testing.T) {
	stream := frames(frameSpec{op: OpBinary, fin: true, payload: make([]byte, 300)})
	var d Decoder
	for i := 0; i < 8; i++ { // 2 + 2 length + 4 mask
		n, c, err := d.Decode(stream[i : i+1])
		if n != 1 || c.Opcode != 0 || err != nil {
			t.Fatalf("byte %d: n=%d chunk=%v err=%v", i, n, c.Opcode, err)
		}
	}
	n, c, err := d.Decode(stream[8:10])
	if n != 2 || c.Opcode != OpBinary || !c.FrameStart || c.FrameEnd || len(c.Payload) != 2 || err != nil {
		t.Fatalf("payload: n=%d chunk=%+v err=%v", n, c, err)
	}
	n, c, _ = d.Decode(stream[10:])
	if n != 298 || !c.FrameEnd || c.Offset != 2 || !c.Fin {
		t.Fatalf("rest: n=%d chunk=%+v", n, c)
	}
}

// TestFailsEarly checks that a rule the first two bytes decide fails
// before the rest of the header, and the size limit before any payload.
func TestFailsEarly(t *testing.T) {
	var d Decoder
	if _, _, err := d.Decode([]byte{0x09}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Decode([]byte{0x80 | 127}); err != ErrControlFragmented {
		t.Fatalf("got %v, want ErrControlFragmented from the second byte", err)
	}
	if _, _, err := d.Decode([]byte{0x81, 0x81}); err != ErrControlFragmented {
		t.Fatalf("after an error: got %v, want the same error", err)
	}
	d = Decoder{}
	if _, _, err := d.Decode([]byte{0x89, 0x80 | 126, 0, 126, 1, 2, 3, 4}); err != ErrControlTooLong {
		t.Fatalf("ping of 126: got %v, want ErrControlTooLong from the header", err)
	}

	d = Decoder{MaxMessage: 1000}
	head := clientFrame(frameSpec{op: OpBinary, fin: true, length: 1001})
	if _, _, err := d.Decode(head); err != ErrMessageTooBig {
		t.Fatalf("declared 1001 over 1000: got %v", err)
	}
	// Fragments count together: 600 + 401 declared.
	d = Decoder{MaxMessage: 1000}
	stream := frames(frameSpec{op: OpBinary, payload: make([]byte, 600)})
	stream = append(stream, clientFrame(frameSpec{op: OpContinuation, fin: true, length: 401})...)
	var err error
	for p := stream; len(p) > 0 && err == nil; {
		var n int
		n, _, err = d.Decode(p)
		p = p[n:]
	}
	if err != ErrMessageTooBig {
		t.Fatalf("fragments over the limit: got %v", err)
	}
	// Exactly at the limit is fine, and control frames do not count.
	got := readAll(frames(frameSpec{op: OpBinary, payload: make([]byte, 600)},
		frameSpec{op: OpPing, fin: true, payload: make([]byte, 100)},
		frameSpec{op: OpContinuation, fin: true, payload: make([]byte, 400)}), 1000)
	if len(got) != 2 || got[1].err != nil || len(got[1].payload) != 1000 {
		t.Fatalf("at the limit: %+v", got)
	}
}

// TestUTF8FailsMidMessage checks that a text message with a bad byte in
// its first fragment fails with 1007 before its final fragment arrives
// (Autobahn 6.4).
func TestUTF8FailsMidMessage(t *testing.T) {
	r := &Reader{}
	stream := frames(text("κόσμε\xed\xa0\x80", false))
	_, _, err := r.Feed(stream)
	var e *Error
	if !errors.As(err, &e) || e.Code != CloseInvalidPayload {
		t.Fatalf("got %v, want a 1007 error", err)
	}
	// Within one frame, too: the bad byte fails before the frame ends.
	r = &Reader{}
	stream = frames(text("ab\xffcdefgh", true))
	if _, _, err := r.Feed(stream[:6+3]); err != ErrInvalidUTF8 {
		t.Fatalf("mid-frame: got %v", err)
	}
}

// TestChunkOpcodes checks that continuation chunks carry the message's
// opcode, and the frame bits.
func TestChunkOpcodes(t *testing.T) {
	stream := frames(frameSpec{op: OpBinary, payload: []byte("a")}, frameSpec{op: OpPing, fin: true}, cont("b", true))
	var d Decoder
	var chunks []Chunk
	for p := stream; len(p) > 0; {
		n, c, err := d.Decode(p)
		if err != nil {
			t.Fatal(err)
		}
		p = p[n:]
		if c.Opcode != 0 {
			c.Payload = nil
			chunks = append(chunks, c)
		}
	}
	want := []Chunk{
		{Opcode: OpBinary, FrameStart: true, FrameEnd: true, Length: 1},
		{Opcode: OpPing, FrameStart: true, FrameEnd: true, Fin: true},
		{Opcode: OpBinary, FrameStart: true, FrameEnd: true, Fin: true, Length: 1},
	}
	if !reflect.DeepEqual(chunks, want) {
		t.Fatalf("got %+v", chunks)
	}
}

// TestMessageInPlace checks that a message whole in one feed is not copied.
func TestMessageInPlace(t *testing.T) {
	stream := frames(frameSpec{op: OpBinary, fin: true, payload: []byte("abcdef")})
	var r Reader
	_, m, err := r.Feed(stream)
	if err != nil || &m.Payload[0] != &stream[6] {
		t.Fatalf("payload not in the caller's buffer (err %v)", err)
	}
}

// TestReaderShrinks checks that a big message's buffer is not kept.
func TestReaderShrinks(t *testing.T) {
	var r Reader
	stream := frames(frameSpec{op: OpBinary, payload: make([]byte, 100000)}, cont("", true), text("a", false), cont("b", true))
	got := feedAll(&r, stream, nil)
	if len(got) != 2 || got[1].payload != "ab" {
		t.Fatalf("got %d messages", len(got))
	}
	if cap(r.message) > keepBuffer {
		t.Fatalf("kept a %d-byte buffer", cap(r.message))
	}
	// Shrink lets go of a big message's buffer once it has been read.
	got = feedAll(&r, frames(frameSpec{op: OpBinary, payload: make([]byte, 100000)}, cont("", true)), nil)
	if len(got) != 1 || cap(r.message) < 100000 {
		t.Fatalf("got %d messages, buffer of %d", len(got), cap(r.message))
	}
	grown := cap(r.message)
	if dropped := r.Shrink(); dropped != grown {
		t.Fatalf("Shrink says it dropped %d bytes, want %d", dropped, grown)
	}
	if cap(r.message) > keepBuffer {
		t.Fatalf("Shrink kept a %d-byte buffer", cap(r.message))
	}
	if dropped := r.Shrink(); dropped != 0 {
		t.Fatalf("a second Shrink dropped %d bytes", dropped)
	}
}
