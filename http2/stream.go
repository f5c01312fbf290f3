package http2

import (
	"golang.org/x/net/http2/hpack"
)

// Stream is one request and its response (§5.1). The handler gets it in
// Handler.Request and gives it back with Conn.Done.
type Stream struct {
	ID       uint32
	Request  Request
	Trailers []hpack.HeaderField
	// Value is the handler's own record for the stream (a job).
	Value any

	remoteClosed bool // END_STREAM received, or reset
	localClosed  bool // END_STREAM sent, or reset
	held         bool // given to the handler, Done not yet called
	lingering    bool // answered and Done, the request body still coming
	reset        bool // ended by RST_STREAM, either side's
	blocked      bool // a WriteData stopped short for want of window

	sendWindow int64 // what the server may still send on the stream
	recvWindow int64 // what the client may still send on the stream
	recvCredit int64 // stream credit to return with WINDOW_UPDATE
	buffered   int64 // body octets given to the handler and not Consumed
	received   int64 // body octets received, for content-length (§8.1.1)
}

// RemoteClosed says the client sends nothing more on the stream: its
// END_STREAM came (with the request's HEADERS, for a request without a
// body), or the stream was reset.
func (s *Stream) RemoteClosed() bool { return s.remoteClosed }

// Closed says the stream takes and sends nothing more.
func (s *Stream) Closed() bool { return s.remoteClosed && s.localClosed }

func (c *Conn) newStream(id uint32) *Stream {
	var s *Stream
	if n := len(c.free); n > 0 {
		s = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		s = &Stream{}
	}
	fields, trailers := s.Request.Fields, s.Trailers
	*s = Stream{
		ID:         id,
		Trailers:   trailers[:0],
		sendWindow: int64(c.peer.initialWindowSize),
		recvWindow: int64(c.cfg.InitialWindowSize),
	}
	s.Request.Fields = fields
	c.streams[id] = s
	return s
}

// closeStream takes s out of the stream table. reset: it ends by
// RST_STREAM (either side's) rather than by both END_STREAMs, and a
// handler holding it hears so.
func (c *Conn) closeStream(s *Stream, reset bool, code ErrCode) {
	if _, ok := c.streams[s.ID]; !ok {
		return
	}
	delete(c.streams, s.ID)
	s.remoteClosed, s.localClosed, s.reset = true, true, reset
	if s.blocked {
		s.blocked = false
		c.blocked--
	}
	// Body the handler never took still holds connection window.
	c.returnCredit(nil, s.buffered)
	s.buffered = 0
	if s.lingering {
		s.lingering = false
		c.lingering--
	}
	if !s.held {
		c.free = append(c.free, s)
		return
	}
	if reset {
		c.handler.Reset(s, code)
	}
}

// Done gives s back: the handler is finished with it. A response that
// did not end is cut off with RST_STREAM (INTERNAL_ERROR).
func (c *Conn) Done(s *Stream) {
	if !s.held {
		return
	}
	s.held = false
	c.served--
	if _, open := c.streams[s.ID]; !open {
		if !s.reset && c.resetScore > 0 {
			c.resetScore-- // a stream that ran its course pays back a reset
		}
		c.free = append(c.free, s)
		return
	}
	if !s.localClosed {
		c.resetStream(s.ID, ErrCodeInternal)
		return
	}
	// The response is whole and the request body is still coming: it is
	// read and dropped until it ends, up to a window's worth, past which
	// RST_STREAM with NO_ERROR asks the client to stop (§8.1). Ending
	// small bodies quietly keeps a trailing DATA or trailer block from
	// meeting a reset the client did not cause.
	s.lingering = true
	c.lingering++
}

// discard drops body that arrives for a lingering stream.
func (c *Conn) discard(s *Stream, n int64, end bool) {
	c.returnCredit(s, n)
	switch {
	case end:
		s.remoteClosed = true
		c.closeStream(s, false, ErrCodeNo)
	case s.received > int64(c.cfg.InitialWindowSize):
		c.out = appendRSTStream(c.out, s.ID, ErrCodeNo)
		c.remember(s.ID)
		c.closeStream(s, false, ErrCodeNo)
	}
}

func (c *Conn) data(h FrameHeader, p []byte) error {
	if h.StreamID == 0 {
		return connError(ErrCodeProtocol, "DATA on stream 0")
	}
	// The whole payload, padding included, counts against both windows
	// (§6.9.1).
	if int64(h.Length) > c.recvWindow {
		return connError(ErrCodeFlowControl, "DATA beyond the connection window")
	}
	c.recvWindow -= int64(h.Length)
	body, err := unpad(h, p)
	if err != nil {
		return err
	}
	s := c.streams[h.StreamID]
	if s == nil || s.remoteClosed {
		c.returnCredit(nil, int64(h.Length))
		if s == nil && h.StreamID > c.lastPeer {
			return connError(ErrCodeProtocol, "DATA on an idle stream")
		}
		if s == nil && c.recentlyReset(h.StreamID) {
			return nil
		}
		return &streamError{h.StreamID, ErrCodeStreamClosed, "DATA after END_STREAM"}
	}
	if int64(h.Length) > s.recvWindow {
		c.returnCredit(nil, int64(h.Length))
		return &streamError{h.StreamID, ErrCodeFlowControl, "DATA beyond the stream window"}
	}
	s.recvWindow -= int64(h.Length)
	// Padding is never the handler's to consume: its credit goes back now.
	c.returnCredit(s, int64(int(h.Length)-len(body)))
	end := h.Flags&FlagEndStream != 0
	if len(body) == 0 && !end {
		if err := c.empty(); err != nil {
			return err
		}
	}
	s.received += int64(len(body))
	if cl := s.Request.ContentLength; cl >= 0 && (s.received > cl || end && s.received != cl) {
		return malformed(s.ID, "body length differs from content-length")
	}
	if s.lingering {
		c.discard(s, int64(len(body)), end)
		return nil
	}
	s.buffered += int64(len(body))
	if end {
		s.remoteClosed = true
	}
	c.handler.Data(s, body, end)
	c.closeIfDone(s)
	return nil
}

// Consumed returns n octets of s's body, which the handler has taken, to
// the client as flow-control credit.
func (c *Conn) Consumed(s *Stream, n int) {
	if int64(n) > s.buffered {
		n = int(s.buffered)
	}
	s.buffered -= int64(n)
	if _, open := c.streams[s.ID]; !open {
		return // closeStream returned its credit already
	}
	c.returnCredit(s, int64(n))
}

// returnCredit gives n octets of receive window back to the connection
// and, when s is open, to s; WINDOW_UPDATE goes out once a quarter of a
// window is owed, not per read.
func (c *Conn) returnCredit(s *Stream, n int64) {
	if n <= 0 {
		return
	}
	c.recvCredit += n
	if c.recvCredit >= int64(c.cfg.ConnWindowSize)/4 {
		c.out = appendWindowUpdate(c.out, 0, uint32(c.recvCredit))
		c.recvWindow += c.recvCredit
		c.recvCredit = 0
	}
	if s == nil || s.remoteClosed {
		return
	}
	s.recvCredit += n
	if s.recvCredit >= int64(c.cfg.InitialWindowSize)/4 {
		c.out = appendWindowUpdate(c.out, s.ID, uint32(s.recvCredit))
		s.recvWindow += s.recvCredit
		s.recvCredit = 0
	}
}

func (c *Conn) closeIfDone(s *Stream) {
	if s.Closed() {
		c.closeStream(s, false, ErrCodeNo)
	}
}

func (c *Conn) headers(h FrameHeader, p []byte) error {
	id := h.StreamID
	if id == 0 || id%2 == 0 {
		return connError(ErrCodeProtocol, "HEADERS on stream 0 or an even stream")
	}
	fragment, err := unpad(h, p)
	if err != nil {
		return err
	}
	b := &c.headerBlock
	*b = headerBlock{stream: id, endStream: h.Flags&FlagEndStream != 0}
	if h.Flags&FlagPriority != 0 {
		if len(fragment) < 5 {
			return connError(ErrCodeFrameSize, "HEADERS too short for its priority")
		}
		if dependency := uint32(fragment[0])<<24&0x7f000000 | uint32(fragment[1])<<16 |
			uint32(fragment[2])<<8 | uint32(fragment[3]); dependency == id {
			b.deferred = &streamError{id, ErrCodeProtocol, "stream depends on itself"}
		}
		fragment = fragment[5:]
	}
	if s := c.streams[id]; s != nil {
		// Trailers (§8.1): they end the stream.
		if s.remoteClosed {
			b.deferred = &streamError{id, ErrCodeStreamClosed, "HEADERS after END_STREAM"}
		} else if !b.endStream {
			b.deferred = malformed(id, "trailers without END_STREAM")
		}
	} else if id <= c.lastPeer {
		if !c.recentlyReset(id) {
			return connError(ErrCodeStreamClosed, "HEADERS on a closed stream")
		}
		b.deferred = errIgnored
	} else {
		c.lastPeer = id
	}
	c.fields = c.fields[:0]
	return c.fragment(fragment, h.Flags&FlagEndHeaders != 0)
}

// errIgnored marks a header block that is decoded only to keep HPACK's
// state, for a stream already reset.
var errIgnored = &streamError{reason: "ignored"}

// fragment decodes one piece of the header block; every piece is decoded,
// even of a block that will be refused, since the HPACK table is the
// connection's (§4.3).
func (c *Conn) fragment(p []byte, end bool) error {
	b := &c.headerBlock
	b.raw += len(p)
	// CONTINUATION flood (CVE-2024-27316): a block may not go on past
	// twice the header list limit, whatever it decodes to.
	if b.raw > 2*int(c.cfg.MaxHeaderListSize)+minMaxFrameSize {
		return connError(ErrCodeEnhanceYourCalm, "header block too long")
	}
	if _, err := c.decoder.Write(p); err != nil {
		return connError(ErrCodeCompression, "HPACK: "+err.Error())
	}
	if b.flood {
		return connError(ErrCodeEnhanceYourCalm, "header list far over its limit")
	}
	if !end {
		return nil
	}
	if err := c.decoder.Close(); err != nil {
		return connError(ErrCodeCompression, "HPACK: "+err.Error())
	}
	whole := *b
	*b = headerBlock{}
	return c.endHeaders(whole)
}

// emit collects a decoded field, counting the list's size as §6.5.2 does;
// past the limit it keeps no more fields, and past four times the limit
// the block is a flood: fields referenced from the table cost an octet
// each to send and their whole size to decode (CVE-2024-27316).
func (c *Conn) emit(f hpack.HeaderField) {
	b := &c.headerBlock
	b.listSize += f.Size()
	if b.listSize > c.cfg.MaxHeaderListSize {
		b.tooLarge = true
		b.flood = b.listSize > 4*c.cfg.MaxHeaderListSize
		return
	}
	c.fields = append(c.fields, f)
}

func (c *Conn) endHeaders(b headerBlock) error {
	id := b.stream
	if b.deferred == errIgnored {
		return nil
	}
	if b.deferred != nil {
		return b.deferred
	}
	if s := c.streams[id]; s != nil {
		if b.tooLarge {
			return &streamError{id, ErrCodeProtocol, "trailers over the header list limit"}
		}
		trailers, err := parseTrailers(id, c.fields, s.Trailers)
		s.Trailers = trailers
		if err != nil {
			return err
		}
		if s.lingering {
			c.discard(s, 0, true)
			return nil
		}
		s.remoteClosed = true
		c.handler.Data(s, nil, true)
		c.closeIfDone(s)
		return nil
	}
	if c.goAway == goAwayFinal && id > c.goAwayLast {
		return nil // after the final GOAWAY, new streams are ignored (§6.8)
	}
	if c.served+c.lingering >= int(c.cfg.MaxConcurrentStreams) {
		// Handlers still busy with reset streams count too, so resets
		// make no room (CVE-2023-44487), and so do answered streams
		// whose request body is still coming. A refusal is charged as a
		// reset: a client that keeps opening past the limit is closed.
		if err := c.chargeReset(); err != nil {
			return err
		}
		return &streamError{id, ErrCodeRefusedStream, "over SETTINGS_MAX_CONCURRENT_STREAMS"}
	}
	s := c.newStream(id)
	s.remoteClosed = b.endStream
	if b.tooLarge {
		// 431 rather than a reset, as Go's and nginx's servers answer
		// (RFC 6585 §5); the block was decoded all the same.
		c.writeStatusOnly(s, 431)
		return nil
	}
	if err := parseRequest(id, c.fields, c.cfg.EnableConnectProtocol, &s.Request); err != nil {
		return err
	}
	if s.remoteClosed && s.Request.ContentLength > 0 {
		return malformed(id, "content-length without a body")
	}
	s.held = true
	c.served++
	c.lastServe = id
	c.handler.Request(s)
	return nil
}
