package ws

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"

	gobwas "github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
)

// seedStreams are frame streams every fuzz target starts from, besides the
// corpora committed in testdata/fuzz.
func seedStreams() [][]byte {
	return [][]byte{
		frames(text("hello", true)),
		frames(text("he", false), frameSpec{op: OpPing, fin: true, payload: []byte("p")}, cont("llo", true)),
		frames(frameSpec{op: OpBinary, fin: true, payload: make([]byte, 200)}),
		frames(frameSpec{op: OpClose, fin: true, payload: []byte("\x03\xe8bye")}),
		frames(frameSpec{op: OpText, fin: true, rsv: bitRSV1, payload: []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}}),
		frames(frameSpec{op: OpBinary, fin: true, payload: make([]byte, 70000)})[:40],
		{0x81, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4},
		{0x8f, 0x80, 1, 2, 3, 4},
	}
}

// FuzzReader checks that any stream, fed whole or split at any byte, gives
// the same messages and the same error, and never panics.
func FuzzReader(f *testing.F) {
	for i, s := range seedStreams() {
		f.Add(s, uint16(i*3), byte(i))
	}
	f.Fuzz(func(t *testing.T, stream []byte, cut uint16, flags byte) {
		newReader := func() *Reader {
			r := &Reader{}
			if flags&1 != 0 {
				r.Compression = true
				r.Inflater = NewInflater()
			}
			if flags&2 != 0 {
				r.MaxMessage = int64(flags) * 4
			}
			return r
		}
		whole := feedAll(newReader(), stream, nil)
		at := int(cut) % (len(stream) + 1)
		if got := feedAll(newReader(), stream, []int{at}); !reflect.DeepEqual(got, whole) {
			t.Fatalf("split at %d: %v, whole: %v", at, got, whole)
		}
		if len(stream) <= 512 {
			cuts := make([]int, 0, len(stream))
			for i := 1; i < len(stream); i++ {
				cuts = append(cuts, i)
			}
			if got := feedAll(newReader(), stream, cuts); !reflect.DeepEqual(got, whole) {
				t.Fatalf("byte by byte: %v, whole: %v", got, whole)
			}
		}
		for _, m := range whole {
			if m.op == OpText && !utf8.ValidString(m.payload) {
				t.Fatalf("text message not UTF-8: %q", m.payload)
			}
			if m.op.IsControl() && len(m.payload) > MaxControlPayload {
				t.Fatalf("control payload of %d bytes", len(m.payload))
			}
		}
	})
}

// FuzzDifferential decodes frame headers, payloads and close frames with
// this package and with github.com/gobwas/ws, and checks that they agree.
// The rules where they differ on purpose are skipped: this package accepts
// the IANA-registered close codes 1012-1014 and refuses codes from 5000.
func FuzzDifferential(f *testing.F) {
	for _, s := range seedStreams() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		var d Decoder
		ours := append([]byte(nil), stream...)
		at := 0
		for at < len(stream) {
			var state gobwas.State = gobwas.StateServerSide
			if d.Fragmented() {
				state |= gobwas.StateFragmented
			}
			src := bytes.NewReader(stream[at:])
			h, err := gobwas.ReadHeader(src)
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return // a partial header: this package waits for more
			}
			if err == nil {
				err = gobwas.CheckHeader(h, state)
			}
			headerLen := len(stream[at:]) - src.Len()

			// Ours: feed the header, then the payload that is there.
			n, c, ourErr := d.Decode(ours[at : at+headerLen])
			if (err == nil) != (ourErr == nil) {
				t.Fatalf("frame at %d: gobwas %v, ours %v", at, err, ourErr)
			}
			if err != nil {
				return
			}
			if n != headerLen {
				t.Fatalf("header of %d bytes, used %d", headerLen, n)
			}
			frame := d.Frame()
			if frame.Fin != h.Fin || frame.Opcode != Opcode(h.OpCode) || frame.Length != h.Length || frame.Mask != h.Mask || frame.RSV1 != h.Rsv1() {
				t.Fatalf("header %+v, gobwas %+v", frame, h)
			}
			at += headerLen
			if h.Length > int64(len(stream)-at) {
				return
			}
			end := at + int(h.Length)
			want := append([]byte(nil), stream[at:end]...)
			gobwas.Cipher(want, h.Mask, 0)
			var got []byte
			if c.Opcode != 0 {
				got = append(got, c.Payload...)
			}
			for p := ours[at:end]; len(p) > 0; {
				n, c, err := d.Decode(p)
				if err != nil {
					t.Fatal(err)
				}
				p = p[n:]
				got = append(got, c.Payload...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("payload differs at %d", at)
			}
			if h.OpCode == gobwas.OpClose && len(want) >= 2 {
				code, reason := gobwas.ParseCloseFrameData(want)
				if (code >= 1012 && code <= 1014) || code >= 5000 {
					return
				}
				theirs := gobwas.CheckCloseFrameData(code, reason)
				if _, _, err := ParseClose(want); (err == nil) != (theirs == nil) {
					t.Fatalf("close %q: gobwas %v, ours %v", want, theirs, err)
				}
			}
			at = end
		}
	})
}

// FuzzDifferentialMessages reads whole messages with Reader and with
// gobwas/ws's wsutil.ReadMessage (its text and close payloads checked here
// as RFC 6455 asks), and checks that they give the same messages and fail
// on the same streams.
func FuzzDifferentialMessages(f *testing.F) {
	for _, s := range seedStreams() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		ours := feedAll(&Reader{}, stream, nil)
		var ourErr error
		if n := len(ours); n > 0 && ours[n-1].err != nil {
			ourErr, ours = ours[n-1].err, ours[:n-1]
		}
		var theirs []got
		var theirErr error
		truncated := false
		src := bytes.NewReader(stream)
	read:
		for src.Len() > 0 {
			msgs, err := wsutil.ReadMessage(src, gobwas.StateServerSide, nil)
			cut := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
			for i, m := range msgs {
				g := got{op: Opcode(m.OpCode), payload: string(m.Payload)}
				// At the end of a stream cut inside a control frame's payload
				// gobwas returns that frame with the part there is: not a
				// message to judge, and Reader, still waiting for the rest,
				// has none.
				partial := cut && i == len(msgs)-1 && m.OpCode.IsControl() && cutInControlFrame(stream)
				switch {
				case partial:
				case m.OpCode == gobwas.OpText && !utf8.Valid(m.Payload):
					theirErr = ErrInvalidUTF8
				case m.OpCode == gobwas.OpClose && len(m.Payload) == 0:
					g.code = CloseNoStatus
				case m.OpCode == gobwas.OpClose && len(m.Payload) == 1:
					theirErr = ErrCloseCode
				case m.OpCode == gobwas.OpClose:
					code, reason := gobwas.ParseCloseFrameData(m.Payload)
					if (code >= 1012 && code <= 1014) || code >= 5000 {
						return // the codes where the two differ on purpose
					}
					theirErr = gobwas.CheckCloseFrameData(code, reason)
					g.code = CloseCode(code)
				}
				if theirErr != nil {
					break read
				}
				theirs = append(theirs, g)
			}
			if cut {
				truncated = true
				break
			}
			if err != nil {
				theirErr = err
				break
			}
		}
		// Reader may fail before gobwas has read enough to: at a bad text
		// byte, or from a header's first two bytes.
		switch {
		case ourErr == nil && theirErr != nil:
			t.Fatalf("gobwas failed with %v, ours read %v", theirErr, ours)
		case ourErr == nil && !truncated && !sameMessages(ours, theirs):
			t.Fatalf("ours %v, gobwas %v", ours, theirs)
		case ourErr == nil && truncated && (len(ours) > len(theirs) || !sameMessages(ours, theirs[:len(ours)])):
			// At the end of a cut stream gobwas returns a control frame
			// with the part of its payload there is.
			t.Fatalf("ours %v, gobwas %v", ours, theirs)
		case ourErr != nil && theirErr == nil && !truncated:
			t.Fatalf("ours failed with %v, gobwas read %v", ourErr, theirs)
		case ourErr != nil && (len(ours) > len(theirs) || !sameMessages(ours, theirs[:len(ours)])):
			t.Fatalf("before failing: ours %v, gobwas %v", ours, theirs)
		}
	})
}

// cutInControlFrame reports whether stream ends inside the payload of a
// control frame, walking the frames' headers (RFC 6455 §5.2).
func cutInControlFrame(stream []byte) bool {
	for len(stream) >= 2 {
		control := stream[0]&0x08 != 0
		length, header := uint64(stream[1]&0x7f), 2
		switch length {
		case 126:
			if len(stream) < 4 {
				return false
			}
			length, header = uint64(stream[2])<<8|uint64(stream[3]), 4
		case 127:
			if len(stream) < 10 {
				return false
			}
			length, header = 0, 10
			for _, b := range stream[2:10] {
				length = length<<8 | uint64(b)
			}
		}
		if stream[1]&0x80 != 0 {
			header += 4
		}
		if uint64(len(stream)) < uint64(header)+length {
			return control && len(stream) >= header
		}
		stream = stream[uint64(header)+length:]
	}
	return false
}

func sameMessages(a, b []got) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzUTF8 checks the incremental validator against unicode/utf8 at a
// split point.
func FuzzUTF8(f *testing.F) {
	for _, s := range utf8Cases {
		f.Add([]byte(s), uint8(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, p []byte, cut uint8) {
		at := int(cut) % (len(p) + 1)
		var v UTF8
		got := v.Write(p[:at]) && v.Write(p[at:]) && v.Complete()
		if got != utf8.Valid(p) {
			t.Fatalf("%q split at %d: %v", p, at, got)
		}
	})
}

// FuzzUnmask checks word-wise unmasking against gobwas's Cipher.
func FuzzUnmask(f *testing.F) {
	f.Add([]byte("some payload bytes to unmask"), uint32(0x37fa213d), uint8(3))
	f.Fuzz(func(t *testing.T, p []byte, key uint32, offset uint8) {
		mask := [4]byte{byte(key >> 24), byte(key >> 16), byte(key >> 8), byte(key)}
		want := append([]byte(nil), p...)
		gobwas.Cipher(want, mask, int(offset))
		Unmask(p, mask, int64(offset))
		if !bytes.Equal(p, want) {
			t.Fatal("differs")
		}
	})
}

// FuzzExtensions checks that any Sec-WebSocket-Extensions value parses
// without panicking and that an accepted permessage-deflate offer was
// offered.
func FuzzExtensions(f *testing.F) {
	for _, s := range []string{
		"permessage-deflate; client_max_window_bits",
		`permessage-deflate; server_max_window_bits="15", x; a=1`,
		"permessage-deflate; client_no_context_takeover; client_no_context_takeover",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		answer, err := negotiateDeflate([][]byte{[]byte(value)})
		if err != nil && answer != "" {
			t.Fatal("an answer with an error")
		}
		if answer != "" && !bytes.Contains(bytes.ToLower([]byte(value)), []byte("permessage-deflate")) {
			t.Fatalf("accepted %q", value)
		}
	})
}

// FuzzInflate checks that inflating anything respects the limit, and that
// what Deflate makes inflates back.
func FuzzInflate(f *testing.F) {
	f.Add([]byte("hello hello hello hello"), uint16(10))
	f.Add([]byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, uint16(100))
	inflater := NewInflater()
	var deflater Deflater
	f.Fuzz(func(t *testing.T, p []byte, limit uint16) {
		out, err := inflater.Inflate(nil, p, int64(limit))
		if limit > 0 && len(out) > int(limit) {
			t.Fatalf("%d bytes past a limit of %d", len(out), limit)
		}
		if err != nil && len(out) != 0 {
			t.Fatal("output with an error")
		}
		z, err := deflater.Deflate(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := inflater.Inflate(nil, z, 0)
		if err != nil || !bytes.Equal(back, p) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
