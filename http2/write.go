package http2

import (
	"strconv"
	"strings"

	"golang.org/x/net/http2/hpack"
)

// statusValues holds :status's value for each code, so that a response
// head costs no conversion.
var statusValues = func() (v [600]string) {
	for code := 100; code < len(v); code++ {
		v[code] = strconv.Itoa(code)
	}
	return v
}()

// WriteHeaders queues a response head on s: :status, then fields, whose
// names are sent in lower case (§8.2.1) and from which HTTP/1.1's
// connection-specific fields, and TE (a request's), are dropped (§8.2.2).
// A 1xx head may come before the final one. end: the response has no body.
func (c *Conn) WriteHeaders(s *Stream, status int, fields []hpack.HeaderField, end bool) {
	if s.localClosed() || c.err != nil {
		return
	}
	c.encoded.b = c.encoded.b[:0]
	value := ""
	if status >= 100 && status < len(statusValues) {
		value = statusValues[status]
	} else {
		value = strconv.Itoa(status)
	}
	c.encoder.WriteField(hpack.HeaderField{Name: ":status", Value: value})
	c.encodeFields(fields)
	c.writeBlock(s, end && status >= 200)
}

// WriteTrailers ends s's response with a trailer block (§8.1).
func (c *Conn) WriteTrailers(s *Stream, fields []hpack.HeaderField) {
	if s.localClosed() || c.err != nil {
		return
	}
	c.encoded.b = c.encoded.b[:0]
	c.encodeFields(fields)
	c.writeBlock(s, true)
}

func (c *Conn) writeStatusOnly(s *Stream, status int) {
	c.WriteHeaders(s, status, nil, true)
	c.closeIfDone(s)
	if !s.Closed() {
		// The request body is not wanted (§8.1).
		c.out = appendRSTStream(c.out, s.ID, ErrCodeNo)
		c.closeStream(s, resetByServer, ErrCodeNo)
	}
}

func (c *Conn) encodeFields(fields []hpack.HeaderField) {
	for _, f := range fields {
		if isConnectionSpecific(f.Name) {
			continue
		}
		// ToLower returns a name already in lower case as it is.
		f.Name = strings.ToLower(f.Name)
		c.encoder.WriteField(f)
	}
}

func isConnectionSpecific(name string) bool {
	for _, n := range [...]string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"} {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// writeBlock frames the encoded block as HEADERS and as many CONTINUATION
// frames as the peer's frame size needs (§4.3): nothing may come between
// them, and nothing does, since the block is framed whole here.
func (c *Conn) writeBlock(s *Stream, end bool) {
	block := c.encoded.b
	limit := int(c.peer.maxFrameSize)
	t := FrameHeaders
	var flags uint8
	if end {
		flags = FlagEndStream
	}
	for first := true; first || len(block) > 0; first = false {
		piece := block[:min(len(block), limit)]
		block = block[len(piece):]
		f := flags
		if len(block) == 0 {
			f |= FlagEndHeaders
		}
		c.out = AppendFrameHeader(c.out, len(piece), t, f, s.ID)
		c.out = append(c.out, piece...)
		t, flags = FrameContinuation, 0
	}
	if end {
		s.endLocal()
		c.closeIfDone(s)
	}
}

// WriteData queues as much of p on s as the flow-control windows and the
// peer's frame size allow (§6.9), and returns how much that was; end is
// honoured only with the last byte. When it stops short the stream waits,
// and Handler.WindowOpened says when to call again with the rest.
func (c *Conn) WriteData(s *Stream, p []byte, end bool) int {
	if s.localClosed() || c.err != nil {
		return 0
	}
	n := 0
	for {
		chunk := min(int64(len(p)-n), int64(c.peer.maxFrameSize), s.sendWindow, c.sendWindow)
		if chunk < 0 {
			chunk = 0
		}
		last := end && n+int(chunk) == len(p)
		if chunk == 0 && !last {
			break
		}
		var flags uint8
		if last {
			flags = FlagEndStream
		}
		c.out = AppendFrameHeader(c.out, int(chunk), FrameData, flags, s.ID)
		c.out = append(c.out, p[n:n+int(chunk)]...)
		n += int(chunk)
		s.sendWindow -= chunk
		c.sendWindow -= chunk
		if last {
			s.endLocal()
			c.closeIfDone(s)
			return n
		}
		if n == len(p) {
			return n
		}
	}
	if !s.blocked {
		s.blocked = true
		c.blocked++
	}
	return n
}
