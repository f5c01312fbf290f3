package ws

import (
	"bytes"
	"strings"
	"testing"
)

// smallFrames is n masked binary frames of size bytes each. Decoding
// unmasks in place, which changes only payload bytes, so the same buffer
// decodes again and again.
func smallFrames(n, size int) []byte {
	var out []byte
	for range n {
		out = append(out, clientFrame(frameSpec{op: OpBinary, fin: true, payload: bytes.Repeat([]byte{'m'}, size)})...)
	}
	return out
}

func feedEach(r *Reader, stream []byte) int {
	count := 0
	for p := stream; len(p) > 0; {
		n, m, err := r.Feed(p)
		if err != nil {
			panic(err)
		}
		if m.Opcode != 0 {
			count++
		}
		p = p[n:]
	}
	return count
}

// TestZeroAllocs checks that the per-frame paths allocate nothing in steady
// state.
func TestZeroAllocs(t *testing.T) {
	stream := smallFrames(16, 100)
	var r Reader
	fragmented := frames(frameSpec{op: OpBinary, payload: make([]byte, 300)}, frameSpec{op: OpPing, fin: true, payload: []byte("p")}, frameSpec{op: OpContinuation, fin: true, payload: make([]byte, 300)})
	ascii := []byte(strings.Repeat("plain text ", 100))
	buf := make([]byte, 0, 4096)
	var v UTF8
	key := []byte("dGhlIHNhbXBsZSBub25jZQ==")
	req := upgradeRequest(with("", "", "Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")...)
	f := NewInflater()
	var d Deflater
	z := stdDeflate(t, deflateText)
	out := make([]byte, 0, 64<<10)
	compressed := frames(frameSpec{op: OpText, fin: true, rsv: bitRSV1, payload: z})
	deflating := &Reader{Decoder: Decoder{Compression: true}, Inflater: f}
	checks := []struct {
		name string
		fn   func()
	}{
		{"Reader.Feed small frames", func() { feedEach(&r, stream) }},
		{"Reader.Feed fragmented with ping", func() { feedEach(&r, fragmented) }},
		{"Unmask", func() { Unmask(stream, testMask, 1) }},
		{"AppendFrame", func() { buf = AppendFrame(buf[:0], OpText, true, ascii) }},
		{"AppendClose", func() { buf = AppendClose(buf[:0], CloseGoingAway, "server stopping") }},
		{"UTF8", func() { v.Reset(); v.Write(ascii) }},
		{"AcceptKey", func() { AcceptKey(key) }},
		{"Accept", func() { Accept(req, Options{Compression: true}) }},
		{"Inflate", func() { out, _ = f.Inflate(out[:0], z, 0) }},
		{"Reader.Feed compressed", func() {
			// Feed unmasks in place: mask again for the next run.
			feedEach(deflating, compressed)
			Unmask(compressed[len(compressed)-len(z):], testMask, 0)
		}},
		{"AppendMessage compressed", func() { out = AppendMessage(out[:0], OpText, deflateText, &d) }},
		{"Deflate", func() { out, _ = d.Deflate(out[:0], deflateText) }},
	}
	// Under -race, deflate's pooled state is dropped at random.
	pooled := map[string]bool{"AppendMessage compressed": true, "Deflate": true}
	for _, c := range checks {
		c.fn()
		if n := testing.AllocsPerRun(100, c.fn); n != 0 && !(raceEnabled && pooled[c.name]) {
			t.Errorf("%s: %.1f allocations per run", c.name, n)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, size := range []int{16, 1024} {
		stream := smallFrames(64, size)
		b.Run(map[int]string{16: "16B", 1024: "1KiB"}[size], func(b *testing.B) {
			var r Reader
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				feedEach(&r, stream)
			}
		})
	}
}

// BenchmarkDecodeSplit feeds 1 KiB frames in 100-byte reads, so headers
// split and payloads arrive in pieces.
func BenchmarkDecodeSplit(b *testing.B) {
	stream := smallFrames(64, 1024)
	var r Reader
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		for at := 0; at < len(stream); at += 100 {
			feedEach(&r, stream[at:min(at+100, len(stream))])
		}
	}
}

func BenchmarkUnmask(b *testing.B) {
	for _, size := range []int{125, 4096, 65536} {
		p := make([]byte, size)
		b.Run(map[int]string{125: "125B", 4096: "4KiB", 65536: "64KiB"}[size], func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				Unmask(p, testMask, 3)
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	payload := []byte(strings.Repeat("x", 100))
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFrame(buf[:0], OpText, true, payload)
	}
}

func BenchmarkUTF8(b *testing.B) {
	for name, s := range map[string]string{
		"ASCII": strings.Repeat("plain text ", 400),
		"Greek": strings.Repeat("κόσμε ", 400),
	} {
		p := []byte(s)
		b.Run(name, func(b *testing.B) {
			var v UTF8
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				v.Reset()
				v.Write(p)
			}
		})
	}
}

func BenchmarkDeflate(b *testing.B) {
	var d Deflater
	out := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(deflateText)))
	b.ReportAllocs()
	for b.Loop() {
		out, _ = d.Deflate(out[:0], deflateText)
	}
}

func BenchmarkInflate(b *testing.B) {
	f := NewInflater()
	z := stdDeflate(b, deflateText)
	out := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(deflateText)))
	b.ReportAllocs()
	for b.Loop() {
		out, _ = f.Inflate(out[:0], z, 0)
	}
}
