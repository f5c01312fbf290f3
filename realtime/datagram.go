package realtime

import (
	"encoding/binary"
	"errors"
)

// A datagram on the bus, byte for byte the Mojo m0serve's encode_bus_frame
// (and m0pub.py's publish_frame):
//
//	bytes 0..7   event id, int64 little-endian (-1: unnumbered)
//	bytes 8..9   channel length, uint16 little-endian
//	then         the channel, UTF-8
//	then         the SSE frame, verbatim, to the end of the datagram
//
// The datagram's boundary is the frame's: one write, one frame.
const datagramHead = 10

// MaxFrame is the largest frame the bus carries (m0pub.py's MAX_FRAME).
const MaxFrame = 64 << 10

// MaxDatagram is the largest datagram: the head, a channel of at most
// 64 KiB and a frame of at most MaxFrame.
const MaxDatagram = datagramHead + 0xffff + MaxFrame

// Unnumbered is the id of a frame published without the counter (a child
// process handed only the bus): always delivered, never journaled.
const Unnumbered = -1

var errDatagram = errors.New("realtime: datagram shorter than its head or channel")

// AppendDatagram appends one bus datagram to dst.
func AppendDatagram(dst []byte, id int64, channel string, frame []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(id))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(channel)))
	dst = append(dst, channel...)
	return append(dst, frame...)
}

// ParseDatagram splits a datagram into its id, channel and frame, which
// point into b.
func ParseDatagram(b []byte) (id int64, channel, frame []byte, err error) {
	if len(b) < datagramHead {
		return 0, nil, nil, errDatagram
	}
	id = int64(binary.LittleEndian.Uint64(b))
	n := int(binary.LittleEndian.Uint16(b[8:]))
	if len(b) < datagramHead+n {
		return 0, nil, nil, errDatagram
	}
	return id, b[datagramHead : datagramHead+n], b[datagramHead+n:], nil
}

// Reserved reports whether a channel is in the namespace the Mojo m0serve
// keeps for its own control frames (a leading 0x01): refused on both
// sides, so an app's name never reaches it.
func Reserved(channel []byte) bool { return len(channel) > 0 && channel[0] == 1 }
