package http2

import (
	"bytes"
	"encoding/binary"
	"errors"

	"golang.org/x/net/http2/hpack"
)

// Handler receives a Conn's streams. Its methods run inside Conn.Feed (or
// the Conn call that caused them) and must not block: they may call the
// Conn's write methods, which only append to its output.
type Handler interface {
	// Request is called when a stream's request head is complete. The
	// stream is the handler's until it calls Conn.Done, whatever happens
	// to the stream meanwhile.
	Request(s *Stream)
	// Data is called with a piece of s's body, valid only during the call.
	// end says the body is complete (trailers, if any, in s.Trailers).
	// The handler returns the bytes' flow-control credit with
	// Conn.Consumed once it has taken them.
	Data(s *Stream, p []byte, end bool)
	// Reset says s gets no more from the client and takes nothing more:
	// the client reset it, the server did on a stream error, or the
	// connection is going away. The handler still calls Done.
	Reset(s *Stream, code ErrCode)
	// WindowOpened says s's send window grew after a WriteData that did
	// not take all it was given.
	WindowOpened(s *Stream)
	// Malformed says the request head on stream id broke RFC 9113's
	// rules (§8.2, §8.3): the stream is reset with PROTOCOL_ERROR and
	// never reaches Request; the connection goes on.
	Malformed(id uint32, reason string)
}

// Conn is the server's side of one HTTP/2 connection (RFC 9113): the
// caller feeds it the bytes received, in any pieces, and sends what it
// appends to its output. It owns the stream table, both directions of
// flow control, HPACK state and the limits that keep a peer's frames from
// costing more than they should. A Conn is not safe for concurrent use.
type Conn struct {
	cfg     Config
	handler Handler
	peer    peerSettings

	decoder *hpack.Decoder
	encoder *hpack.Encoder
	encoded appendWriter // the encoder's output for one header block
	fields  []hpack.HeaderField
	out     []byte

	prefaceDone  bool
	wantSettings bool // the client's first frame must be SETTINGS (§3.4)
	err          *ConnError

	streams   map[uint32]*Stream
	free      []*Stream
	lastPeer  uint32 // the highest stream id the client has used
	lastServe uint32 // the highest stream id handed to the handler
	served    int    // streams the handler holds (Done not yet called)
	lingering int    // streams answered, their request body still coming
	// closed remembers the ids of the streams closed last, the high bit
	// set for those the server reset, whose late frames are ignored
	// (§5.1); a ring, of recentClosed(cfg) entries.
	closed   []uint32
	closedAt int

	sendWindow  int64 // what the server may still send on the connection
	recvWindow  int64 // what the client may still send on the connection
	recvCredit  int64 // connection credit to return with WINDOW_UPDATE
	blocked     int   // streams waiting for send window
	headerBlock headerBlock

	resetScore    int
	queuedControl int
	emptyFrames   int

	goAway     goAwayState
	goAwayLast uint32
}

type goAwayState uint8

const (
	goAwayNone  goAwayState = iota
	goAwayFirst             // GOAWAY with 2^31-1 sent, waiting for the PING's ack
	goAwayFinal             // the last stream id the server will serve is said
)

// shutdownPing is the payload of the PING sent with the first GOAWAY:
// its ack proves the client has seen that GOAWAY (§6.8).
var shutdownPing = []byte("m0-drain")

// headerBlock is a header block being received: a HEADERS frame and the
// CONTINUATION frames after it (§4.3), decoded as they arrive.
type headerBlock struct {
	stream    uint32
	endStream bool
	listSize  uint32
	tooLarge  bool
	flood     bool
	raw       int   // octets of block fragments received
	deferred  error // a stream error found in HEADERS, raised at its end
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// NewConn returns the server side of a connection whose client preface is
// yet to come. Its output starts with the server's SETTINGS (§3.4).
func NewConn(cfg Config, handler Handler) *Conn {
	c := &Conn{
		cfg:          cfg.WithDefaults(),
		handler:      handler,
		peer:         defaultPeerSettings,
		wantSettings: true,
		streams:      make(map[uint32]*Stream),
		sendWindow:   defaultWindow,
	}
	c.closed = make([]uint32, recentClosed(c.cfg))
	c.decoder = hpack.NewDecoder(defaultTableSize, c.emit)
	c.decoder.SetMaxStringLength(int(c.cfg.MaxHeaderListSize))
	c.encoder = hpack.NewEncoder(&c.encoded)
	connect := uint32(0)
	if c.cfg.EnableConnectProtocol {
		connect = 1
	}
	c.out = appendSettings(c.out,
		settingMaxConcurrentStreams, c.cfg.MaxConcurrentStreams,
		settingInitialWindowSize, c.cfg.InitialWindowSize,
		settingMaxFrameSize, c.cfg.MaxFrameSize,
		settingMaxHeaderListSize, c.cfg.MaxHeaderListSize,
		settingEnableConnectProtocol, connect)
	c.recvWindow = int64(c.cfg.ConnWindowSize)
	if c.cfg.ConnWindowSize > defaultWindow {
		c.out = appendWindowUpdate(c.out, 0, c.cfg.ConnWindowSize-defaultWindow)
	}
	return c
}

// Output is what the Conn has to send. The caller sends it, then calls
// Sent with how much went out.
func (c *Conn) Output() []byte { return c.out }

// Sent drops n sent bytes from the output. A peer that reads what it is
// sent is no longer counted as letting control frames pile up.
func (c *Conn) Sent(n int) {
	c.out = c.out[:copy(c.out, c.out[n:])]
	if len(c.out) == 0 {
		c.queuedControl = 0
	}
}

// Err is the connection error that ended the Conn, nil while it serves.
func (c *Conn) Err() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

// Feed takes received bytes and handles every complete frame in them,
// returning how many bytes it used; the caller keeps the rest and feeds
// it again with what arrives next. A frame is used whole or not at all,
// so the caller's buffer must hold MaxFrameSize+9 bytes. A *ConnError
// is final: its GOAWAY is in the output, and the connection closes once
// that is sent.
func (c *Conn) Feed(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	used := 0
	if !c.prefaceDone {
		n := min(len(p), len(Preface))
		if string(p[:n]) != Preface[:n] {
			return 0, c.fail(connError(ErrCodeProtocol, "no client connection preface"))
		}
		if n < len(Preface) {
			return 0, nil
		}
		c.prefaceDone = true
		used = len(Preface)
	}
	for len(p)-used >= FrameHeaderLen {
		h := ReadFrameHeader(p[used:])
		if h.Length > c.cfg.MaxFrameSize {
			// Refused from the header alone, before any payload is
			// buffered (§4.2).
			return used, c.fail(connError(ErrCodeFrameSize, "frame larger than SETTINGS_MAX_FRAME_SIZE"))
		}
		end := used + FrameHeaderLen + int(h.Length)
		if end > len(p) {
			break
		}
		payload := p[used+FrameHeaderLen : end]
		used = end
		if err := c.frame(h, payload); err != nil {
			var se *streamError
			if errors.As(err, &se) {
				c.resetStream(se.stream, se.code)
				if c.err != nil {
					return used, c.err
				}
				continue
			}
			var ce *ConnError
			if !errors.As(err, &ce) {
				ce = connError(ErrCodeInternal, err.Error())
			}
			return used, c.fail(ce)
		}
		if c.err != nil {
			return used, c.err
		}
	}
	return used, nil
}

// fail ends the connection with a GOAWAY naming the last stream served
// (§5.4.1), and resets every stream the handler holds.
func (c *Conn) fail(e *ConnError) *ConnError {
	if c.err != nil {
		return c.err
	}
	c.err = e
	c.out = appendGoAway(c.out, c.lastServe, e.Code)
	c.resetAll(e.Code)
	return e
}

// Close tells the handler that every stream it holds is gone: the
// connection closed under them.
func (c *Conn) Close() {
	if c.err == nil {
		c.err = connError(ErrCodeCancel, "connection closed")
	}
	c.resetAll(ErrCodeCancel)
}

func (c *Conn) resetAll(code ErrCode) {
	for _, s := range c.streams {
		c.closeStream(s, resetByServer, code)
	}
}

// frame handles one whole frame.
func (c *Conn) frame(h FrameHeader, p []byte) error {
	if c.headerBlock.stream != 0 && (h.Type != FrameContinuation || h.StreamID != c.headerBlock.stream) {
		return connError(ErrCodeProtocol, "frame inside a header block")
	}
	if c.wantSettings {
		if h.Type != FrameSettings || h.Flags&FlagAck != 0 {
			return connError(ErrCodeProtocol, "first frame not SETTINGS")
		}
		c.wantSettings = false
	}
	switch h.Type {
	case FrameData:
		return c.data(h, p)
	case FrameHeaders:
		return c.headers(h, p)
	case FrameContinuation:
		if c.headerBlock.stream == 0 {
			return connError(ErrCodeProtocol, "CONTINUATION without HEADERS")
		}
		if len(p) == 0 && h.Flags&FlagEndHeaders == 0 {
			if err := c.empty(); err != nil {
				return err
			}
		}
		return c.fragment(p, h.Flags&FlagEndHeaders != 0)
	case FramePriority:
		return c.priority(h, p)
	case FrameRSTStream:
		return c.rstStream(h, p)
	case FrameSettings:
		return c.settings(h, p)
	case FramePushPromise:
		return connError(ErrCodeProtocol, "PUSH_PROMISE from a client")
	case FramePing:
		return c.ping(h, p)
	case FrameGoAway:
		if h.StreamID != 0 {
			return connError(ErrCodeProtocol, "GOAWAY on a stream")
		}
		if len(p) < 8 {
			return connError(ErrCodeFrameSize, "GOAWAY shorter than 8 octets")
		}
		return nil
	case FrameWindowUpdate:
		return c.windowUpdate(h, p)
	}
	return nil // unknown types are ignored (§5.5)
}

// empty counts a frame that carries nothing and ends nothing.
func (c *Conn) empty() error {
	c.emptyFrames++
	if c.emptyFrames > c.cfg.MaxEmptyFrames {
		return connError(ErrCodeEnhanceYourCalm, "too many empty frames")
	}
	return nil
}

func (c *Conn) priority(h FrameHeader, p []byte) error {
	if h.StreamID == 0 {
		return connError(ErrCodeProtocol, "PRIORITY on stream 0")
	}
	if len(p) != 5 {
		return &streamError{h.StreamID, ErrCodeFrameSize, "PRIORITY not 5 octets"}
	}
	if binary.BigEndian.Uint32(p)&maxStreamID == h.StreamID {
		return &streamError{h.StreamID, ErrCodeProtocol, "stream depends on itself"}
	}
	return nil // priorities are advice, and RFC 9113 retires them (§5.3.2)
}

func (c *Conn) rstStream(h FrameHeader, p []byte) error {
	if h.StreamID == 0 {
		return connError(ErrCodeProtocol, "RST_STREAM on stream 0")
	}
	if len(p) != 4 {
		return connError(ErrCodeFrameSize, "RST_STREAM not 4 octets")
	}
	s := c.streams[h.StreamID]
	if s == nil {
		if h.StreamID > c.lastPeer {
			return connError(ErrCodeProtocol, "RST_STREAM on an idle stream")
		}
		return nil
	}
	c.closeStream(s, resetByClient, ErrCode(binary.BigEndian.Uint32(p)))
	return c.chargeReset()
}

// chargeReset counts a reset against the budget that streams ending
// normally pay back.
func (c *Conn) chargeReset() error {
	c.resetScore++
	if c.resetScore > c.cfg.ResetBudget {
		return connError(ErrCodeEnhanceYourCalm, "too many streams reset")
	}
	return nil
}

func (c *Conn) settings(h FrameHeader, p []byte) error {
	if h.StreamID != 0 {
		return connError(ErrCodeProtocol, "SETTINGS on a stream")
	}
	if h.Flags&FlagAck != 0 {
		if len(p) != 0 {
			return connError(ErrCodeFrameSize, "SETTINGS ack with a payload")
		}
		return nil
	}
	if len(p)%6 != 0 {
		return connError(ErrCodeFrameSize, "SETTINGS not a multiple of 6 octets")
	}
	opened := false
	err := c.peer.apply(p, func(delta int64) error {
		for _, s := range c.streams {
			s.sendWindow += delta
			if s.sendWindow > maxWindow {
				return connError(ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE overflows a window")
			}
		}
		opened = opened || delta > 0
		return nil
	})
	if err != nil {
		return err
	}
	c.encoder.SetMaxDynamicTableSizeLimit(c.peer.headerTableSize)
	// The ack goes before any DATA the new window lets out: the client
	// learns the settings took effect before it sees their use.
	c.out = AppendFrameHeader(c.out, 0, FrameSettings, FlagAck, 0)
	if opened {
		c.wakeBlocked()
	}
	return c.control()
}

// control counts a control frame queued for the peer.
func (c *Conn) control() error {
	c.queuedControl++
	if c.queuedControl > c.cfg.MaxQueuedControl {
		return connError(ErrCodeEnhanceYourCalm, "peer does not read its control frames")
	}
	return nil
}

func (c *Conn) ping(h FrameHeader, p []byte) error {
	if h.StreamID != 0 {
		return connError(ErrCodeProtocol, "PING on a stream")
	}
	if len(p) != 8 {
		return connError(ErrCodeFrameSize, "PING not 8 octets")
	}
	if h.Flags&FlagAck != 0 {
		if c.goAway == goAwayFirst && bytes.Equal(p, shutdownPing) {
			c.finalGoAway()
		}
		return nil
	}
	c.out = appendPing(c.out, FlagAck, p)
	return c.control()
}

func (c *Conn) windowUpdate(h FrameHeader, p []byte) error {
	if len(p) != 4 {
		return connError(ErrCodeFrameSize, "WINDOW_UPDATE not 4 octets")
	}
	increment := int64(binary.BigEndian.Uint32(p) & maxStreamID)
	if h.StreamID == 0 {
		if increment == 0 {
			return connError(ErrCodeProtocol, "WINDOW_UPDATE of 0 on the connection")
		}
		c.sendWindow += increment
		if c.sendWindow > maxWindow {
			return connError(ErrCodeFlowControl, "connection window above 2^31-1")
		}
		c.wakeBlocked()
		return nil
	}
	s := c.streams[h.StreamID]
	if s == nil {
		if h.StreamID > c.lastPeer {
			return connError(ErrCodeProtocol, "WINDOW_UPDATE on an idle stream")
		}
		return nil // closed: the update may have crossed our END_STREAM
	}
	if increment == 0 {
		return &streamError{h.StreamID, ErrCodeProtocol, "WINDOW_UPDATE of 0"}
	}
	s.sendWindow += increment
	if s.sendWindow > maxWindow {
		return &streamError{h.StreamID, ErrCodeFlowControl, "stream window above 2^31-1"}
	}
	if s.blocked && s.sendWindow > 0 && c.sendWindow > 0 {
		c.unblock(s)
	}
	return nil
}

// wakeBlocked tells the handler about every stream waiting for window
// while the connection has some.
func (c *Conn) wakeBlocked() {
	if c.blocked == 0 || c.sendWindow <= 0 {
		return
	}
	for _, s := range c.streams {
		if s.blocked && s.sendWindow > 0 {
			c.unblock(s)
		}
	}
}

func (c *Conn) unblock(s *Stream) {
	s.blocked = false
	c.blocked--
	c.handler.WindowOpened(s)
}

// recentClosed is how many closed streams a Conn remembers: a grace for
// the frames a client had in flight when a stream closed (§5.1), which
// a client with as many streams as it may open keeps up with; bounded,
// since each id stays until the ring comes round.
func recentClosed(cfg Config) int {
	return min(max(2*int(cfg.MaxConcurrentStreams), 32), 1024)
}

const serverResetBit = 1 << 31 // stream ids are 31 bits (§5.1.1)

// remember notes a stream that closed, and whether the server reset it.
func (c *Conn) remember(id uint32, serverReset bool) {
	if serverReset {
		id |= serverResetBit
	}
	c.closed[c.closedAt] = id
	c.closedAt = (c.closedAt + 1) % len(c.closed)
}

type closedKind uint8

const (
	closedUnknown       closedKind = iota // never opened, or forgotten
	closedOtherwise                       // both END_STREAMs, or the client's reset
	closedByServerReset                   // late frames may have crossed the RST_STREAM
)

// recall says how a stream id at or below lastPeer closed, as far as the
// ring remembers: a reset by the server wins over another entry of the
// same id (a frame on the closed stream that the server answered with
// RST_STREAM).
func (c *Conn) recall(id uint32) closedKind {
	kind := closedUnknown
	for _, e := range c.closed {
		switch {
		case e == id|serverResetBit:
			return closedByServerReset
		case e == id:
			kind = closedOtherwise
		}
	}
	return kind
}

// resetStream sends RST_STREAM for a stream error and closes the stream.
// Resetting a stream that was open is charged against the reset budget
// (MadeYouReset); answering a frame on a closed one costs only output.
func (c *Conn) resetStream(id uint32, code ErrCode) {
	c.out = appendRSTStream(c.out, id, code)
	if s := c.streams[id]; s != nil {
		c.closeStream(s, resetByServer, code)
		if err := c.chargeReset(); err != nil {
			c.fail(err.(*ConnError))
			return
		}
	} else if c.recall(id) != closedByServerReset {
		// A stream refused before it opened (REFUSED_STREAM), or a frame
		// on a closed one: what the client had in flight for it is
		// ignored too.
		c.remember(id, true)
	}
	if err := c.control(); err != nil {
		c.fail(err.(*ConnError))
	}
}

// Shutdown starts a graceful close (§6.8): a GOAWAY with the largest
// stream id, and a PING whose ack says the client has seen it; then a
// second GOAWAY names the last stream the server serves. Streams up to it
// finish; Finished says when all have.
func (c *Conn) Shutdown() {
	if c.goAway != goAwayNone || c.err != nil {
		return
	}
	c.goAway = goAwayFirst
	c.out = appendGoAway(c.out, maxStreamID, ErrCodeNo)
	c.out = appendPing(c.out, 0, shutdownPing)
}

// ShutdownNow sends the final GOAWAY without waiting for the PING's ack
// (the caller's grace period ran out, or the client never answers).
func (c *Conn) ShutdownNow() {
	if c.goAway != goAwayFinal && c.err == nil {
		c.finalGoAway()
	}
}

func (c *Conn) finalGoAway() {
	c.goAway = goAwayFinal
	c.goAwayLast = c.lastPeer
	c.out = appendGoAway(c.out, c.goAwayLast, ErrCodeNo)
}

// Finished says the connection has nothing left to do but send its
// output: it failed, or its final GOAWAY is sent and no stream is left.
func (c *Conn) Finished() bool {
	return c.err != nil || (c.goAway == goAwayFinal && c.served == 0 && len(c.streams) == 0)
}

// Idle says no stream is open or held by the handler.
func (c *Conn) Idle() bool { return c.served == 0 && len(c.streams) == 0 }

// WindowShut says some stream waits for the client to open the
// connection's window, which all streams share: the caller's send
// timeout applies to the connection while it does (and to a stream
// whose own window is shut, Stream.WindowShut).
func (c *Conn) WindowShut() bool { return c.blocked > 0 && c.sendWindow <= 0 }

// Cancel resets s with CANCEL (the server no longer wants it: a send
// timeout) if it is still open; the handler hears Reset as for any reset
// and still calls Done.
func (c *Conn) Cancel(s *Stream) {
	if c.err != nil {
		return
	}
	if _, open := c.streams[s.ID]; open {
		c.resetStream(s.ID, ErrCodeCancel)
	}
}
