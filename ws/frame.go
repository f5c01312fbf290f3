package ws

// Opcode is a frame's opcode, RFC 6455 §5.2.
type Opcode uint8

const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether the opcode is a control opcode (§5.5).
func (o Opcode) IsControl() bool { return o&0x8 != 0 }

// known reports whether the opcode is defined by RFC 6455 (§5.2: the others
// are reserved and fail the connection).
func (o Opcode) known() bool {
	switch o {
	case OpContinuation, OpText, OpBinary, OpClose, OpPing, OpPong:
		return true
	}
	return false
}

func (o Opcode) String() string {
	switch o {
	case OpContinuation:
		return "continuation"
	case OpText:
		return "text"
	case OpBinary:
		return "binary"
	case OpClose:
		return "close"
	case OpPing:
		return "ping"
	case OpPong:
		return "pong"
	}
	return "reserved"
}

// Bits of a frame header's first two bytes (§5.2).
const (
	bitFin    = 0x80
	bitRSV1   = 0x40
	bitRSV2   = 0x20
	bitRSV3   = 0x10
	maskOp    = 0x0f
	bitMasked = 0x80
	maskLen   = 0x7f
)

// MaxControlPayload is the largest payload of a control frame (§5.5).
const MaxControlPayload = 125

// MaxHeaderLen is the longest frame header: 2 bytes, an 8-byte extended
// length and a 4-byte masking key.
const MaxHeaderLen = 14

// Header is a decoded frame header.
type Header struct {
	Fin    bool
	RSV1   bool // per-message compressed, when permessage-deflate is on (RFC 7692 §6)
	Opcode Opcode
	Masked bool
	Mask   [4]byte
	Length int64 // payload length in bytes
}
