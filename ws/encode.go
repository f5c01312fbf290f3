package ws

// AppendHeader appends the header of an unmasked (server) frame to dst
// (§5.2: servers never mask). rsv1 marks a compressed message's first
// frame (RFC 7692 §6). The length uses the fewest bytes that hold it.
func AppendHeader(dst []byte, op Opcode, fin, rsv1 bool, length int64) []byte {
	b0 := byte(op)
	if fin {
		b0 |= bitFin
	}
	if rsv1 {
		b0 |= bitRSV1
	}
	switch {
	case length <= 125:
		return append(dst, b0, byte(length))
	case length <= 0xffff:
		return append(dst, b0, 126, byte(length>>8), byte(length))
	}
	return append(dst, b0, 127,
		byte(length>>56), byte(length>>48), byte(length>>40), byte(length>>32),
		byte(length>>24), byte(length>>16), byte(length>>8), byte(length))
}

// AppendFrame appends a whole unmasked frame carrying payload to dst.
func AppendFrame(dst []byte, op Opcode, fin bool, payload []byte) []byte {
	dst = AppendHeader(dst, op, fin, false, int64(len(payload)))
	return append(dst, payload...)
}

// HeaderLen is the length of the header AppendHeader writes for a payload
// of length bytes, for a caller that reserves room before the payload.
func HeaderLen(length int64) int {
	switch {
	case length <= 125:
		return 2
	case length <= 0xffff:
		return 4
	}
	return 10
}
