package loop

import (
	"net/netip"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop/tls"
)

// connState is where a connection stands in its request cycle.
type connState uint8

const (
	// stateHead: reading a request head (or idle between requests).
	stateHead connState = iota
	// stateJob: a deferred handler owns the request; its body streams to
	// it and its response streams back.
	stateJob
	// stateDiscard: the response is done but the request body is not:
	// read and drop it before the next request.
	stateDiscard
	// stateWebSocket: upgraded; frames, not requests (websocket.go).
	stateWebSocket
	// stateHTTP2: an HTTP/2 connection; streams, each a request
	// (http2.go).
	stateHTTP2
	// stateHold: held after its response, subscribed to a channel (hold.go).
	stateHold
)

// deadlineKind says what a slot's deadline is waiting for.
type deadlineKind uint8

const (
	deadlineNone deadlineKind = iota
	deadlineHeader
	deadlineIdle
	deadlineBody
	deadlineLinger
	deadlineWSClose // the client's Close is due (websocket.go)
)

// slot is one connection. Slots are recycled; gen tells a completion for an
// earlier connection in the same slot from one for this connection.
type slot struct {
	index uint32
	gen   uint32
	fd    int
	open  bool // a connection occupies the slot

	state  connState
	parser http1.Parser
	req    http1.Request
	job    *Job
	ws     *WebSocket // set once upgraded
	h2     *h2conn    // set once it speaks HTTP/2
	hold   *hold      // set once held (hold.go)
	alpnH2 bool       // its TLS handshake chose h2 (startOnALPN)

	// Receive side. Bytes not yet consumed are recv[recvStart:recvEnd],
	// unless provided holds a backend buffer being parsed in place.
	recv        []byte
	recvStart   int
	recvEnd     int
	provided    []byte
	recvPending bool // a receive is queued or a multishot receive is armed
	recvOwnBuf  bool // the pending receive writes into recv
	recvWanted  bool // the slot needs bytes: queue a receive at the end of the pass
	recvPausing bool // an armed receive is being cancelled for back-pressure
	peerEOF     bool

	// Send side. send is the buffer responses are written into; while
	// sending, the backend owns it.
	send    []byte
	sending bool
	// sendProgress: when the pending send was queued or last seen
	// advancing (unix ns); sendAcked: the peer's acknowledged bytes then.
	sendProgress   int64
	sendAcked      uint64
	sendAckedKnown bool

	// Body framing of the request being read.
	bodyChunked   bool
	bodyRemaining int64 // Content-Length bytes still to come
	bodyRead      int64
	chunked       http1.ChunkedDecoder
	// The body rate window (Config.BodyMinRate): since when (unix ns; 0
	// while the loop is not waiting on the body) and bodyRead then.
	rateSince int64
	rateFrom  int64

	keepAlive  bool
	requests   int  // requests dispatched on the connection (Config.MaxKeepAliveRequests)
	closeAfter bool // close once everything queued is sent
	linger     bool // after an error response: drain what the client still sends before closing
	lingering  bool // shut down for writing; discarding input until EOF or the linger deadline
	closing    bool // QueueClose issued; waiting for OpClose
	closed     bool // OpClose arrived

	deadline     int64 // unix nanoseconds; 0: none
	deadlineKind deadlineKind

	touched bool // on the loop's list of slots to flush this pass
	// busy: counted in Loop.busy, from a request's first byte until the
	// connection waits for the next one with nothing received.
	busy bool

	// TLS (Config.TLS, tls.go): the connection's TLS room, &tlsState
	// (nil for a plain connection, or once its first bytes were not TLS).
	tls      *tls.Conn
	tlsState tls.Conn

	remote       netip.AddrPort
	remoteKnown  bool
	countedPerIP bool // counted in Loop.perIP under remote's address
}

// input returns the bytes received and not yet consumed.
func (s *slot) input() []byte {
	if s.provided != nil {
		return s.provided
	}
	return s.recv[s.recvStart:s.recvEnd]
}

// consume drops n bytes from the front of the input.
func (s *slot) consume(n int) {
	if s.provided != nil {
		s.provided = s.provided[n:]
		return
	}
	s.recvStart += n
	if s.recvStart == s.recvEnd && !s.recvOwnBuf {
		s.recvStart, s.recvEnd = 0, 0
	}
}

// remoteAddr returns the peer address, asking the kernel once per
// connection and only when someone wants it.
func (s *slot) remoteAddr() netip.AddrPort {
	if s.remoteKnown {
		return s.remote
	}
	s.remoteKnown = true
	s.remote, _ = peerAddr(s.fd)
	return s.remote
}

// newSlot takes a free slot (or grows the table: slots are allocated on
// first use, never for every possible connection).
func (l *Loop) newSlot(fd int) *slot {
	var s *slot
	if n := len(l.freeSlots); n > 0 {
		s = l.slots[l.freeSlots[n-1]]
		l.freeSlots = l.freeSlots[:n-1]
	} else {
		s = &slot{index: uint32(len(l.slots))}
		s.parser.Limits = l.cfg.Limits
		// A chunk size past the limit is refused on sight (consumeBody);
		// a negative MaxBodySize is no limit, the decoder's 0.
		s.chunked.MaxBodyBytes = max(l.cfg.MaxBodySize, 0)
		l.slots = append(l.slots, s)
	}
	s.fd, s.open = fd, true
	s.state = stateHead
	s.keepAlive = true
	l.active++
	return s
}

// maybeFree recycles a closed slot once nothing of the backend's refers to
// its buffers any more (backend.go: ownership).
func (l *Loop) maybeFree(s *slot) {
	if !s.closed || s.recvPending || s.sending {
		return
	}
	l.buffers.putRecv(s.recv)
	l.buffers.putSend(s.send)
	if s.countedPerIP {
		l.releasePerIP(s.remote.Addr())
	}
	l.setIdle(s)
	gen := s.gen + 1
	index := s.index
	limits := s.parser.Limits
	req, chunked := s.req, s.chunked
	// The parsed request's spans point into the receive buffer just
	// given back (or dropped): a free slot must not hold it, or every slot
	// a peak of connections left behind pins a buffer for good.
	req.Rebase(nil)
	*s = slot{index: index, gen: gen}
	s.parser.Limits = limits
	s.req = req
	s.chunked = chunked
	l.freeSlots = append(l.freeSlots, index)
	l.active--
	l.resumeAccept()
}
