package ws

import (
	"bytes"
	stdflate "compress/flate"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// stdDeflate compresses as a permessage-deflate client does: a sync flush,
// its tail removed (RFC 7692 §7.2.1). It uses the standard library, an
// implementation independent of the one under test.
func stdDeflate(t testing.TB, p []byte) []byte {
	var b bytes.Buffer
	w, _ := stdflate.NewWriter(&b, stdflate.BestCompression)
	w.Write(p)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	if !bytes.HasSuffix(out, deflateTail[:]) {
		t.Fatal("no sync flush tail")
	}
	return out[:len(out)-4]
}

// stdInflate decompresses a message as a client does: the tail put back.
func stdInflate(t testing.TB, p []byte) []byte {
	r := stdflate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader(deflateTail[:])))
	out, err := io.ReadAll(r)
	if err != io.ErrUnexpectedEOF && err != nil {
		t.Fatal(err)
	}
	return out
}

var deflateText = []byte(strings.Repeat("the quick brown fox jumps over the lazy dog; ", 200))

func TestInflate(t *testing.T) {
	f := NewInflater()
	for _, msg := range [][]byte{nil, []byte("a"), deflateText, bytes.Repeat([]byte{0}, 1<<20)} {
		got, err := f.Inflate([]byte("keep"), stdDeflate(t, msg), 0)
		if err != nil || !bytes.Equal(got[4:], msg) || string(got[:4]) != "keep" {
			t.Fatalf("%d bytes: err %v, got %d bytes", len(msg), err, len(got))
		}
	}
	// A message whose last block is final (BFINAL set) also inflates.
	var b bytes.Buffer
	w, _ := stdflate.NewWriter(&b, 5)
	w.Write(deflateText)
	w.Close()
	if got, err := f.Inflate(nil, b.Bytes(), 0); err != nil || !bytes.Equal(got, deflateText) {
		t.Fatalf("final block: %v", err)
	}
	if _, err := f.Inflate(nil, []byte{0xff, 0xff, 0xff}, 0); err != ErrInflate {
		t.Fatalf("garbage: got %v", err)
	}
}

// TestInflateGrowsGeometrically: 16 MiB inflated from 16 KB of zeros
// allocates a small multiple of the output, not a step of the input's
// size at a time (80 MiB copied and dropped before).
func TestInflateGrowsGeometrically(t *testing.T) {
	f := NewInflater()
	msg := make([]byte, 16<<20)
	src := stdDeflate(t, msg)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := f.Inflate(nil, src, 0)
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != len(msg) {
		t.Fatalf("err %v, %d bytes", err, len(got))
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 3*uint64(len(msg)) {
		t.Errorf("inflating %d bytes allocated %d", len(msg), allocated)
	}
}

// TestInflateLimit checks that a small message that inflates past the
// limit stops there: 1 MiB of zeros compresses to about 1 KiB.
func TestInflateLimit(t *testing.T) {
	bomb := stdDeflate(t, make([]byte, 1<<20))
	f := NewInflater()
	got, err := f.Inflate(nil, bomb, 1000)
	if err != ErrMessageTooBig || len(got) != 0 {
		t.Fatalf("got %v with %d bytes", err, len(got))
	}
	if cap(got) > 64<<10 {
		t.Fatalf("inflated into %d bytes of buffer for a 1000-byte limit", cap(got))
	}
	if got, err := f.Inflate(nil, stdDeflate(t, make([]byte, 1000)), 1000); err != nil || len(got) != 1000 {
		t.Fatalf("exactly at the limit: %v", err)
	}
}

func TestDeflate(t *testing.T) {
	var d Deflater
	for _, msg := range [][]byte{nil, []byte("a"), deflateText} {
		out, err := d.Deflate([]byte("keep"), msg)
		if err != nil || string(out[:4]) != "keep" {
			t.Fatal(err)
		}
		if got := stdInflate(t, out[4:]); !bytes.Equal(got, msg) {
			t.Fatalf("%d bytes: round trip differs", len(msg))
		}
	}
}

// TestAppendMessage checks that messages under MinCompress and ones that
// do not shrink go out plain, and the rest compressed with RSV1.
func TestAppendMessage(t *testing.T) {
	var d Deflater
	small := AppendMessage(nil, OpText, []byte("hello"), &d)
	if small[0] != 0x81 || string(small[2:]) != "hello" {
		t.Fatalf("small: %q", small)
	}
	if out := AppendMessage(nil, OpText, deflateText[:MinCompress-1], &d); out[0] != 0x81 {
		t.Fatalf("%d bytes: first byte %#x, want plain", MinCompress-1, out[0])
	}
	if out := AppendMessage(nil, OpText, deflateText[:MinCompress], &d); out[0] != 0xc1 {
		t.Fatalf("%d bytes: first byte %#x, want compressed", MinCompress, out[0])
	}
	random := make([]byte, 2000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	if out := AppendMessage([]byte("pre"), OpBinary, random, &d); out[3] != 0x82 || !bytes.Equal(out[3+4:], random) {
		t.Fatalf("random bytes: first byte %#x, want plain", out[3])
	}
	for _, msg := range [][]byte{deflateText, bytes.Repeat([]byte("ab"), 300), make([]byte, 100000)} {
		out := AppendMessage([]byte("pre"), OpBinary, msg, &d)
		frame := out[3:]
		if frame[0] != 0xc2 {
			t.Fatalf("%d bytes: first byte %#x, want FIN|RSV1|binary", len(msg), frame[0])
		}
		if got := stdInflate(t, frame[serverHeaderLen(frame):]); !bytes.Equal(got, msg) {
			t.Fatalf("%d bytes: round trip differs", len(msg))
		}
		// And our own reader takes it.
		r := &Reader{Decoder: Decoder{Compression: true}, Inflater: NewInflater()}
		m := feedAll(r, maskServerFrame(frame), nil)
		if len(m) != 1 || m[0].payload != string(msg) {
			t.Fatalf("%d bytes: reader got %v", len(msg), m)
		}
	}
}

// TestCompressedMessages feeds compressed messages, whole and fragmented,
// through a Reader at every split.
func TestCompressedMessages(t *testing.T) {
	z := stdDeflate(t, deflateText)
	half := len(z) / 2
	stream := frames(
		frameSpec{op: OpText, fin: true, rsv: bitRSV1, payload: z},
		frameSpec{op: OpText, rsv: bitRSV1, payload: z[:half]},
		frameSpec{op: OpPing, fin: true, payload: []byte("p")},
		frameSpec{op: OpContinuation, fin: true, payload: z[half:]},
		frameSpec{op: OpText, fin: true, payload: []byte("plain")},
		frameSpec{op: OpText, fin: true, rsv: bitRSV1, payload: stdDeflate(t, []byte("€"))},
	)
	want := []got{{op: OpText, payload: string(deflateText)}, {op: OpPing, payload: "p"}, {op: OpText, payload: string(deflateText)}, {op: OpText, payload: "plain"}, {op: OpText, payload: "€"}}
	newReader := func() *Reader {
		return &Reader{Decoder: Decoder{Compression: true}, Inflater: NewInflater()}
	}
	for cut := 0; cut <= len(stream); cut++ {
		if got := feedAll(newReader(), stream, []int{cut}); len(got) != len(want) || got[0] != want[0] || got[2] != want[2] || got[4] != want[4] {
			t.Fatalf("split at %d: %v", cut, got)
		}
	}
	// RSV1 on a continuation frame is a protocol error (RFC 7692 §6.1).
	bad := frames(frameSpec{op: OpText, rsv: bitRSV1, payload: z[:half]}, frameSpec{op: OpContinuation, fin: true, rsv: bitRSV1, payload: z[half:]})
	if got := feedAll(newReader(), bad, nil); len(got) != 1 || got[0].err != ErrReservedBits {
		t.Fatalf("RSV1 on continuation: %v", got)
	}
	// RSV1 on a control frame is an error with compression on, too.
	bad = frames(frameSpec{op: OpPing, fin: true, rsv: bitRSV1})
	if got := feedAll(newReader(), bad, nil); len(got) != 1 || got[0].err != ErrReservedBits {
		t.Fatalf("RSV1 on ping: %v", got)
	}
	// Inflated text must be UTF-8; inflated size is capped by MaxMessage.
	bad = frames(frameSpec{op: OpText, fin: true, rsv: bitRSV1, payload: stdDeflate(t, []byte("a\xffb"))})
	if got := feedAll(newReader(), bad, nil); len(got) != 1 || got[0].err != ErrInvalidUTF8 {
		t.Fatalf("bad UTF-8: %v", got)
	}
	r := newReader()
	r.MaxMessage = 4096
	bomb := frames(frameSpec{op: OpBinary, fin: true, rsv: bitRSV1, payload: stdDeflate(t, make([]byte, 1<<20))})
	if got := feedAll(r, bomb, nil); len(got) != 1 || got[0].err != ErrMessageTooBig {
		t.Fatalf("bomb: %v", got)
	}
}
