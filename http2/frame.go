package http2

import "encoding/binary"

// FrameType is a frame's type octet (RFC 9113 §6).
type FrameType uint8

// The frame types of RFC 9113 §6. A type not listed is ignored (§5.5).
const (
	FrameData         FrameType = 0x0
	FrameHeaders      FrameType = 0x1
	FramePriority     FrameType = 0x2
	FrameRSTStream    FrameType = 0x3
	FrameSettings     FrameType = 0x4
	FramePushPromise  FrameType = 0x5
	FramePing         FrameType = 0x6
	FrameGoAway       FrameType = 0x7
	FrameWindowUpdate FrameType = 0x8
	FrameContinuation FrameType = 0x9
)

// Frame flags (RFC 9113 §6): each means something only on the types named.
const (
	FlagEndStream  = 0x1  // DATA, HEADERS
	FlagAck        = 0x1  // SETTINGS, PING
	FlagEndHeaders = 0x4  // HEADERS, CONTINUATION
	FlagPadded     = 0x8  // DATA, HEADERS
	FlagPriority   = 0x20 // HEADERS
)

// FrameHeaderLen is the fixed frame header's size (§4.1).
const FrameHeaderLen = 9

// Preface is what a client sends before its first frame (§3.4).
const Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// FrameHeader is the 9-octet header of every frame (§4.1).
type FrameHeader struct {
	Length   uint32 // payload length, 24 bits
	Type     FrameType
	Flags    uint8
	StreamID uint32 // 31 bits; the reserved bit is ignored on receipt
}

// ReadFrameHeader decodes the header at the start of b, which must hold at
// least FrameHeaderLen bytes.
func ReadFrameHeader(b []byte) FrameHeader {
	return FrameHeader{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     FrameType(b[3]),
		Flags:    b[4],
		StreamID: binary.BigEndian.Uint32(b[5:9]) & (1<<31 - 1),
	}
}

// AppendFrameHeader appends a frame header to dst.
func AppendFrameHeader(dst []byte, length int, t FrameType, flags uint8, stream uint32) []byte {
	return append(dst, byte(length>>16), byte(length>>8), byte(length), byte(t), flags,
		byte(stream>>24)&0x7f, byte(stream>>16), byte(stream>>8), byte(stream))
}

func appendUint32(dst []byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(dst, v)
}

// appendSettings appends a SETTINGS frame carrying the given pairs.
func appendSettings(dst []byte, pairs ...uint32) []byte {
	dst = AppendFrameHeader(dst, len(pairs)/2*6, FrameSettings, 0, 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		dst = binary.BigEndian.AppendUint16(dst, uint16(pairs[i]))
		dst = appendUint32(dst, pairs[i+1])
	}
	return dst
}

func appendWindowUpdate(dst []byte, stream, increment uint32) []byte {
	dst = AppendFrameHeader(dst, 4, FrameWindowUpdate, 0, stream)
	return appendUint32(dst, increment)
}

func appendRSTStream(dst []byte, stream uint32, code ErrCode) []byte {
	dst = AppendFrameHeader(dst, 4, FrameRSTStream, 0, stream)
	return appendUint32(dst, uint32(code))
}

func appendGoAway(dst []byte, last uint32, code ErrCode) []byte {
	dst = AppendFrameHeader(dst, 8, FrameGoAway, 0, 0)
	dst = appendUint32(dst, last)
	return appendUint32(dst, uint32(code))
}

func appendPing(dst []byte, flags uint8, payload []byte) []byte {
	dst = AppendFrameHeader(dst, 8, FramePing, flags, 0)
	return append(dst, payload[:8]...)
}

// unpad strips the padding of a DATA or HEADERS payload (§6.1, §6.2): a
// pad length that covers the whole payload is a connection error.
func unpad(h FrameHeader, payload []byte) ([]byte, error) {
	if h.Flags&FlagPadded == 0 {
		return payload, nil
	}
	if len(payload) == 0 {
		return nil, connError(ErrCodeFrameSize, "padded frame without a pad length")
	}
	pad := int(payload[0])
	if pad >= len(payload) {
		return nil, connError(ErrCodeProtocol, "padding as long as the frame")
	}
	return payload[1 : len(payload)-pad], nil
}
