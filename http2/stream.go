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

	state streamState
	// Who has the stream besides the codec: held, the handler (Done not
	// yet called); lingering, nobody: answered and Done, the request body
	// still coming, read and dropped (quiet: none of it came since the
	// last ExpireLingering).
	held, lingering, quiet bool
	blocked                bool // a WriteData stopped short for want of window

	sendWindow int64 // what the server may still send on the stream
	recvWindow int64 // what the client may still send on the stream
	recvCredit int64 // stream credit to return with WINDOW_UPDATE
	buffered   int64 // body octets given to the handler and not Consumed
	received   int64 // body octets received, for content-length (§8.1.1)
}

// RemoteClosed says the client sends nothing more on the stream: its
// END_STREAM came (with the request's HEADERS, for a request without a
// body), or the stream was reset.
func (s *Stream) RemoteClosed() bool { return s.remoteClosed() }

// Closed says the stream takes and sends nothing more.
func (s *Stream) Closed() bool { return s.state == stateClosed || s.state == stateReset }

// WindowShut says a response waits on the stream for the client to open
// the stream's own window (not the connection's): what the caller's send
// timeout applies to, stream by stream.
func (s *Stream) WindowShut() bool { return s.blocked && s.sendWindow <= 0 }

func (c *Conn) newStream(id uint32, endStream bool) *Stream {
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
	if endStream {
		s.state = stateHalfClosedRemote
	}
	s.Request.Fields = fields
	c.streams[id] = s
	return s
}

// ending is how a stream left the stream table.
type ending uint8

const (
	endedNormally ending = iota // both END_STREAMs
	resetByClient               // the client's RST_STREAM
	resetByServer               // the server's RST_STREAM, or the connection's end
)

// closeStream takes s out of the stream table and remembers how it
// ended; a handler holding a stream that was reset hears so.
func (c *Conn) closeStream(s *Stream, how ending, code ErrCode) {
	if _, ok := c.streams[s.ID]; !ok {
		return
	}
	delete(c.streams, s.ID)
	if how != endedNormally {
		s.move(stateReset)
	}
	c.remember(s.ID, how == resetByServer)
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
	if how != endedNormally {
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
		if s.state != stateReset && c.resetScore > 0 {
			c.resetScore-- // a stream that ran its course pays back a reset
		}
		c.free = append(c.free, s)
		return
	}
	if !s.localClosed() {
		c.resetStream(s.ID, ErrCodeInternal)
		return
	}
	// The response is whole and the request body is still coming: it is
	// read and dropped until it ends, up to a window's worth, past which
	// RST_STREAM with NO_ERROR asks the client to stop (§8.1). Ending
	// small bodies quietly keeps a trailing DATA or trailer block from
	// meeting a reset the client did not cause; a body that stops coming
	// is cut off the same way by ExpireLingering, so that no stream
	// outlives its handler by more than the caller's body timeout.
	s.lingering, s.quiet = true, false
	c.lingering++
}

// discard drops body that arrives for a lingering stream.
func (c *Conn) discard(s *Stream, n int64, end bool) {
	c.returnCredit(s, n)
	s.quiet = false
	switch {
	case end:
		s.endRemote()
		c.closeIfDone(s)
	case s.received > int64(c.cfg.InitialWindowSize):
		c.cutLingering(s)
	}
}

// cutLingering asks the client to stop sending a lingering stream's
// body (§8.1).
func (c *Conn) cutLingering(s *Stream) {
	c.out = appendRSTStream(c.out, s.ID, ErrCodeNo)
	c.closeStream(s, resetByServer, ErrCodeNo)
}

// ExpireLingering cuts off, with RST_STREAM (NO_ERROR), each stream whose
// handler is done and whose request body has not moved since the
// previous call, and reports whether it cut any. Called once per body
// timeout, it keeps a client that stops sending a body nobody reads from
// holding a stream (and the connection) longer than two of them.
func (c *Conn) ExpireLingering() bool {
	if c.lingering == 0 || c.err != nil {
		return false
	}
	cut := false
	for _, s := range c.streams {
		switch {
		case !s.lingering:
		case !s.quiet:
			s.quiet = true
		default:
			c.cutLingering(s)
			cut = true
		}
	}
	return cut
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
	if s == nil || s.remoteClosed() {
		c.returnCredit(nil, int64(h.Length))
		if s == nil && h.StreamID > c.lastPeer {
			return connError(ErrCodeProtocol, "DATA on an idle stream")
		}
		if s == nil && c.recall(h.StreamID) == closedByServerReset {
			return nil // it may have crossed our RST_STREAM (§5.1)
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
		s.endRemote()
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
	if s == nil || s.remoteClosed() {
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
	if s.state == stateClosed {
		c.closeStream(s, endedNormally, ErrCodeNo)
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
		if s.remoteClosed() {
			b.deferred = &streamError{id, ErrCodeStreamClosed, "HEADERS after END_STREAM"}
		} else if !b.endStream {
			b.deferred = malformed(id, "trailers without END_STREAM")
		}
	} else if id <= c.lastPeer {
		switch c.recall(id) {
		case closedByServerReset:
			// Trailers that crossed our RST_STREAM: decoded for HPACK's
			// sake, then dropped (§5.1).
			b.deferred = errIgnored
		case closedOtherwise:
			return connError(ErrCodeStreamClosed, "HEADERS on a closed stream")
		default:
			// Never opened (the first use of a higher id closed it), or
			// closed too long ago to tell: an id that does not grow
			// (§5.1.1).
			return connError(ErrCodeProtocol, "HEADERS on a stream id lower than one already used")
		}
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
	// CONTINUATION flood (CVE-2024-27316): HPACK encodes a field in
	// fewer octets than the 32 §6.5.2 adds to its size, so a block longer
	// than the header list limit decodes past it; a frame of slack lets
	// a list just over the limit be answered 431. Beyond, the connection
	// ends at once, whatever the block decodes to.
	if b.raw > int(c.cfg.MaxHeaderListSize)+minMaxFrameSize {
		return connError(ErrCodeEnhanceYourCalm, "header block longer than the header list limit")
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
// past the limit it keeps no more fields, and past twice the limit the
// block is a flood: fields referenced from the table cost an octet each
// to send and their whole size to decode (CVE-2024-27316).
func (c *Conn) emit(f hpack.HeaderField) {
	b := &c.headerBlock
	b.listSize += f.Size()
	if b.listSize > c.cfg.MaxHeaderListSize {
		b.tooLarge = true
		b.flood = b.listSize > 2*c.cfg.MaxHeaderListSize
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
		s.endRemote()
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
	s := c.newStream(id, b.endStream)
	if b.tooLarge {
		// 431 rather than a reset, as Go's and nginx's servers answer
		// (RFC 6585 §5); the block was decoded all the same.
		c.writeStatusOnly(s, 431)
		return nil
	}
	if err := parseRequest(id, c.fields, c.cfg.EnableConnectProtocol, &s.Request); err != nil {
		c.handler.Malformed(id, err.(*streamError).reason)
		return err
	}
	if s.RemoteClosed() && s.Request.ContentLength > 0 {
		c.handler.Malformed(id, "content-length without a body")
		return malformed(id, "content-length without a body")
	}
	s.held = true
	c.served++
	c.lastServe = id
	c.handler.Request(s)
	return nil
}
