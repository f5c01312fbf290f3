package ws

// Decoder reads client frames from bytes that arrive in pieces (§5). The
// caller owns the buffers: it hands Decode whatever it has read, and gets
// back how many bytes were used and at most one Chunk, a piece of one
// frame's payload unmasked in place in the caller's buffer. A header split
// between reads is kept (at most 14 bytes) and finished by the next call;
// nothing is parsed twice. Decoder checks every framing rule as early as
// the bytes allow, including the message size limit against each frame's
// declared length before any of its payload is taken, and never allocates.
//
// The zero value is ready for a connection without extensions and without
// a size limit.
type Decoder struct {
	// MaxMessage bounds a data message's payload: the declared lengths of
	// its frames together (for a compressed message, the compressed
	// bytes). 0 means no limit. Over it: ErrMessageTooBig (1009).
	MaxMessage int64
	// Compression allows RSV1 on a data message's first frame: set when
	// permessage-deflate was negotiated (RFC 7692 §6).
	Compression bool

	header     [MaxHeaderLen]byte
	headerLen  int // bytes of a split header kept in header
	headerSize int // the split header's whole size, once its first two bytes are in
	inPayload  bool
	frame      Header
	offset     int64 // payload bytes of frame already returned

	fragmented bool   // a data message has begun and its final frame has not
	message    Opcode // the data message's opcode: OpText or OpBinary
	compressed bool   // the data message has RSV1 on its first frame
	messageLen int64  // declared payload bytes of the data message so far

	err error // once set, every later call returns it
}

// Chunk is a piece of one frame's payload, already unmasked.
type Chunk struct {
	// Opcode is the frame's opcode, except that a continuation frame
	// carries the opcode of the message it continues (OpText or OpBinary).
	// It is 0 when Decode returned no chunk.
	Opcode Opcode
	// Compressed: the data message this chunk belongs to is compressed.
	Compressed bool
	// FrameStart: the first chunk of a frame; FrameEnd: its last.
	FrameStart, FrameEnd bool
	// Fin is the frame's FIN bit: with FrameEnd, the message is complete.
	Fin bool
	// Offset is where Payload starts within the frame's payload, and
	// Length the frame's whole payload length.
	Offset, Length int64
	// Payload aliases the buffer passed to Decode.
	Payload []byte
}

// MessageEnd reports whether the chunk completes a message (a control frame
// is a message of its own).
func (c *Chunk) MessageEnd() bool { return c.FrameEnd && c.Fin }

// Reset readies the decoder for a new connection, keeping its settings.
func (d *Decoder) Reset() {
	*d = Decoder{MaxMessage: d.MaxMessage, Compression: d.Compression}
}

// Fragmented reports whether a data message has begun and not yet ended.
func (d *Decoder) Fragmented() bool { return d.fragmented }

// Decode consumes bytes from p and returns how many it used and at most
// one chunk (Opcode 0 when none is ready). A frame with an empty payload
// still gives one chunk, with FrameStart and FrameEnd. The caller calls
// again with p[n:] while bytes are left; when Decode has used all of p
// without a chunk, it needs more bytes. An error is final: the connection
// must be failed with its close code (every error is an *Error).
func (d *Decoder) Decode(p []byte) (n int, c Chunk, err error) {
	if d.err != nil {
		return 0, c, d.err
	}
	if !d.inPayload {
		var done bool
		n, done, err = d.readHeader(p)
		if err != nil {
			d.err = err
			return n, c, err
		}
		if !done {
			return n, c, nil
		}
		if d.frame.Length == 0 {
			return n, d.take(nil), nil
		}
	}
	left := d.frame.Length - d.offset
	avail := len(p) - n
	if avail == 0 {
		return n, c, nil
	}
	take := avail
	if int64(take) > left {
		take = int(left)
	}
	payload := p[n : n+take : n+take]
	Unmask(payload, d.frame.Mask, d.offset)
	return n + take, d.take(payload), nil
}

// take returns the chunk for payload, the frame's next bytes, and moves on.
func (d *Decoder) take(payload []byte) Chunk {
	f := &d.frame
	c := Chunk{
		Opcode:     f.Opcode,
		Fin:        f.Fin,
		FrameStart: d.offset == 0,
		Offset:     d.offset,
		Length:     f.Length,
		Payload:    payload,
	}
	if !f.Opcode.IsControl() {
		c.Opcode = d.message
		c.Compressed = d.compressed
	}
	d.offset += int64(len(payload))
	if d.offset == f.Length {
		c.FrameEnd = true
		d.inPayload = false
		d.offset = 0
		d.headerLen = 0
		d.headerSize = 0
	}
	return c
}

// readHeader consumes header bytes from p. It parses straight from p when
// the whole header is there and nothing is kept from an earlier call, and
// otherwise gathers the header in d.header first.
func (d *Decoder) readHeader(p []byte) (n int, done bool, err error) {
	if d.headerLen == 0 && len(p) >= 2 {
		size, err := d.checkStart(p[0], p[1])
		if err != nil {
			return 0, false, err
		}
		if len(p) >= size {
			return size, true, d.parseHeader(p[:size])
		}
		d.headerSize = size
	}
	// Gather: the first two bytes, then the rest once its size is known.
	for d.headerLen < 2 && n < len(p) {
		d.header[d.headerLen] = p[n]
		d.headerLen++
		n++
	}
	if d.headerLen < 2 {
		return n, false, nil
	}
	if d.headerSize == 0 {
		if d.headerSize, err = d.checkStart(d.header[0], d.header[1]); err != nil {
			return n, false, err
		}
	}
	size := d.headerSize
	m := copy(d.header[d.headerLen:size], p[n:])
	d.headerLen += m
	n += m
	if d.headerLen < size {
		return n, false, nil
	}
	return n, true, d.parseHeader(d.header[:size])
}

// checkStart applies the rules the first two bytes decide (§5.2, §5.4,
// §5.5; RFC 7692 §6.1), so a bad frame fails before the rest of its header
// arrives, and returns the header's size.
func (d *Decoder) checkStart(b0, b1 byte) (size int, err error) {
	op := Opcode(b0 & maskOp)
	if !op.known() {
		return 0, ErrReservedOpcode
	}
	if b0&(bitRSV2|bitRSV3) != 0 {
		return 0, ErrReservedBits
	}
	if b0&bitRSV1 != 0 && (!d.Compression || op == OpContinuation || op.IsControl()) {
		return 0, ErrReservedBits
	}
	if b1&bitMasked == 0 {
		return 0, ErrUnmasked
	}
	length := b1 & maskLen
	if op.IsControl() {
		// A control frame's length is checked once whole: an extended
		// length may still be at most 125 (see parseHeader).
		if b0&bitFin == 0 {
			return 0, ErrControlFragmented
		}
	} else if op == OpContinuation {
		if !d.fragmented {
			return 0, ErrContinuationNoMessage
		}
	} else if d.fragmented {
		return 0, ErrContinuationExpected
	}
	size = 2 + 4
	switch length {
	case 126:
		size += 2
	case 127:
		size += 8
	}
	return size, nil
}

// parseHeader decodes a whole header that checkStart has passed, checks
// the length, and starts the frame.
func (d *Decoder) parseHeader(h []byte) error {
	f := &d.frame
	f.Fin = h[0]&bitFin != 0
	f.RSV1 = h[0]&bitRSV1 != 0
	f.Opcode = Opcode(h[0] & maskOp)
	f.Masked = true
	i := 2
	switch n := h[1] & maskLen; n {
	case 126:
		f.Length = int64(h[2])<<8 | int64(h[3])
		i = 4
	case 127:
		if h[2]&0x80 != 0 {
			return ErrLengthMSB
		}
		f.Length = int64(h[2])<<56 | int64(h[3])<<48 | int64(h[4])<<40 | int64(h[5])<<32 |
			int64(h[6])<<24 | int64(h[7])<<16 | int64(h[8])<<8 | int64(h[9])
		i = 10
	default:
		f.Length = int64(n)
	}
	copy(f.Mask[:], h[i:i+4])

	if f.Opcode.IsControl() {
		if f.Length > MaxControlPayload {
			return ErrControlTooLong
		}
	} else {
		if f.Opcode != OpContinuation {
			d.message = f.Opcode
			d.compressed = f.RSV1
			d.messageLen = 0
		}
		if d.MaxMessage > 0 && f.Length > d.MaxMessage-d.messageLen {
			return ErrMessageTooBig
		}
		d.messageLen += f.Length
		d.fragmented = !f.Fin
	}
	d.inPayload = true
	d.offset = 0
	return nil
}

// Frame returns the header of the frame being read: valid from the first
// chunk of a frame until its last.
func (d *Decoder) Frame() Header { return d.frame }
