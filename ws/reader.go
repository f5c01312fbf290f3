package ws

// Message is one whole message or control frame from Reader.Feed.
type Message struct {
	// Opcode is OpText, OpBinary, OpClose, OpPing or OpPong; 0 when Feed
	// returned no message.
	Opcode Opcode
	// Payload is the message's payload, unmasked and inflated. It aliases
	// the buffer passed to Feed or the Reader's own, and is valid until the
	// next Feed or until the caller reuses its buffer.
	Payload []byte
	// Code and Reason are a Close frame's status (CloseNoStatus when it
	// had none); Reason aliases Payload.
	Code   CloseCode
	Reason []byte
}

// keepBuffer is the largest message buffer a Reader keeps between
// messages (see Shrink).
const keepBuffer = 64 << 10

// Reader puts whole messages together from bytes that arrive in pieces,
// for a consumer that wants messages (such as the Python bridge): it
// decodes frames with its Decoder, joins fragments, returns each control
// frame as a message of its own (also one between a message's fragments),
// validates text as it arrives (a bad byte fails with 1007 before the
// message ends), and inflates compressed messages. A message that arrives
// whole in one Feed is returned in place, without a copy.
type Reader struct {
	Decoder
	// Inflater, when set, inflates compressed messages
	// (permessage-deflate negotiated; set Decoder.Compression too). It
	// may be shared by the Readers of one thread.
	Inflater *Inflater

	message []byte // the data message being joined, or inflated
	joined  []byte // compressed payload being joined before inflating
	control [MaxControlPayload]byte
	ctlLen  int
	text    UTF8

	inMessage bool // a data message has begun and not been returned
}

// Reset readies the reader for a new connection, keeping its settings.
func (r *Reader) Reset() {
	r.Decoder.Reset()
	r.message, r.joined = reuse(r.message), reuse(r.joined)
	r.ctlLen = 0
	r.inMessage = false
	r.text.Reset()
}

// Feed consumes bytes from p and returns how many it used and at most one
// message (Opcode 0 when none is complete). Call it again with p[n:]
// while bytes are left. The caller must keep p's bytes in place until it
// is done with the message, whose payload may alias them. A compressed
// text message is validated once inflated, when it is whole. An error is
// final and is an *Error carrying the close code to fail the connection
// with.
func (r *Reader) Feed(p []byte) (n int, m Message, err error) {
	for n < len(p) || n == 0 {
		used, c, err := r.Decode(p[n:])
		n += used
		if err != nil {
			return n, m, err
		}
		if c.Opcode == 0 {
			if used == 0 || n == len(p) {
				return n, m, nil
			}
			continue
		}
		if c.Opcode.IsControl() {
			if m, ok, err := r.controlChunk(&c); ok || err != nil {
				return n, m, err
			}
			continue
		}
		if m, ok, err := r.dataChunk(&c); ok || err != nil {
			return n, m, err
		}
	}
	return n, m, nil
}

func (r *Reader) controlChunk(c *Chunk) (m Message, ok bool, err error) {
	payload := c.Payload
	if !(c.FrameStart && c.FrameEnd) {
		r.ctlLen += copy(r.control[r.ctlLen:], c.Payload)
		if !c.FrameEnd {
			return m, false, nil
		}
		payload = r.control[:r.ctlLen]
		r.ctlLen = 0
	}
	m = Message{Opcode: c.Opcode, Payload: payload}
	if c.Opcode == OpClose {
		m.Code, m.Reason, err = ParseClose(payload)
		if err != nil {
			return r.fail(err)
		}
	}
	return m, true, nil
}

func (r *Reader) dataChunk(c *Chunk) (m Message, ok bool, err error) {
	whole := false
	if !r.inMessage {
		r.startMessage()
		whole = c.FrameEnd && c.Fin // the message is this one chunk
	}
	end := c.MessageEnd()
	if end {
		r.inMessage = false
	}
	if c.Compressed {
		if r.Inflater == nil {
			return r.fail(ErrReservedBits)
		}
		src := c.Payload
		if !whole {
			r.joined = append(r.joined, c.Payload...)
			if !end {
				return m, false, nil
			}
			src = r.joined
		}
		r.message, err = r.Inflater.Inflate(r.message[:0], src, r.MaxMessage)
		if err != nil {
			return r.fail(err)
		}
		if c.Opcode == OpText && (!r.text.Write(r.message) || !r.text.Complete()) {
			return r.fail(ErrInvalidUTF8)
		}
		return Message{Opcode: c.Opcode, Payload: r.message}, true, nil
	}
	if c.Opcode == OpText && !r.text.Write(c.Payload) {
		return r.fail(ErrInvalidUTF8)
	}
	payload := c.Payload
	if !whole {
		r.message = append(r.message, c.Payload...)
		if !end {
			return m, false, nil
		}
		payload = r.message
	}
	if c.Opcode == OpText && !r.text.Complete() {
		return r.fail(ErrInvalidUTF8)
	}
	return Message{Opcode: c.Opcode, Payload: payload}, true, nil
}

// Shrink drops the message buffers if an earlier big message grew them
// past 64 KiB, so that an idle connection does not hold a big message's
// memory, and returns the bytes dropped (for a caller that returns memory
// to the OS after enough). Call it once done with the last message Feed
// returned; the next message starts with such buffers dropped in any case.
func (r *Reader) Shrink() (dropped int) {
	if !r.inMessage {
		dropped = dropSize(r.message) + dropSize(r.joined)
		r.message, r.joined = reuse(r.message), reuse(r.joined)
	}
	return dropped
}

// dropSize is what reuse drops of b.
func dropSize(b []byte) int {
	if cap(b) > keepBuffer {
		return cap(b)
	}
	return 0
}

// startMessage empties the buffers for a new data message, dropping any
// grown past keepBuffer by an earlier big one.
func (r *Reader) startMessage() {
	r.inMessage = true
	r.message = reuse(r.message)
	r.joined = reuse(r.joined)
	r.text.Reset()
}

func reuse(b []byte) []byte {
	if cap(b) > keepBuffer {
		return nil
	}
	return b[:0]
}

// fail makes err final for this reader.
func (r *Reader) fail(err error) (Message, bool, error) {
	r.err = err
	return Message{}, false, err
}
