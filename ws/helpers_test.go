package ws

import (
	"encoding/binary"
	"fmt"
)

var testMask = [4]byte{0x37, 0xfa, 0x21, 0x3d}

// frameSpec is a client frame for tests; raw bits allow broken frames.
type frameSpec struct {
	op       Opcode
	fin      bool
	rsv      byte // RSV bits as they sit in the first byte (0x40, 0x20, 0x10)
	unmasked bool
	length   int64 // declared length when payload is nil and length > 0
	payload  []byte
}

// clientFrame encodes f as a client sends it: masked with testMask.
func clientFrame(f frameSpec) []byte {
	b0 := byte(f.op) | f.rsv
	if f.fin {
		b0 |= bitFin
	}
	n := int64(len(f.payload))
	if f.payload == nil && f.length > 0 {
		n = f.length
	}
	var out []byte
	mask := byte(bitMasked)
	if f.unmasked {
		mask = 0
	}
	switch {
	case n <= 125:
		out = append(out, b0, mask|byte(n))
	case n <= 0xffff:
		out = append(out, b0, mask|126, byte(n>>8), byte(n))
	default:
		out = append(out, b0, mask|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if !f.unmasked {
		out = append(out, testMask[:]...)
	}
	start := len(out)
	out = append(out, f.payload...)
	if !f.unmasked {
		for i := start; i < len(out); i++ {
			out[i] ^= testMask[(i-start)&3]
		}
	}
	return out
}

func text(s string, fin bool) frameSpec {
	return frameSpec{op: OpText, fin: fin, payload: []byte(s)}
}

func cont(s string, fin bool) frameSpec {
	return frameSpec{op: OpContinuation, fin: fin, payload: []byte(s)}
}

func frames(specs ...frameSpec) []byte {
	var out []byte
	for _, f := range specs {
		out = append(out, clientFrame(f)...)
	}
	return out
}

// got is one message or the error that ended a feed.
type got struct {
	op      Opcode
	payload string
	code    CloseCode
	err     error
}

// feedAll feeds stream to a fresh reader in the pieces given by cuts (byte
// offsets, ascending) and returns what came out. The stream is copied
// first, since the reader unmasks in place.
func feedAll(r *Reader, stream []byte, cuts []int) []got {
	buf := append([]byte(nil), stream...)
	var out []got
	prev := 0
	cuts = append(cuts, len(buf))
	for _, cut := range cuts {
		piece := buf[prev:cut]
		prev = cut
		for len(piece) > 0 {
			n, m, err := r.Feed(piece)
			piece = piece[n:]
			if err != nil {
				return append(out, got{err: err})
			}
			if m.Opcode != 0 {
				out = append(out, got{op: m.Opcode, payload: string(m.Payload), code: m.Code})
			}
			if n == 0 && m.Opcode == 0 {
				panic("Feed made no progress")
			}
		}
	}
	return out
}

func (g got) String() string {
	if g.err != nil {
		return fmt.Sprintf("error(%v)", g.err)
	}
	p := g.payload
	if len(p) > 40 {
		p = fmt.Sprintf("%.40s...(%d bytes)", p, len(p))
	}
	return fmt.Sprintf("%v(%q code %d)", g.op, p, g.code)
}
