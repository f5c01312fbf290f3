package loop

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/realtime"
)

// Realtime configures held connections (Config.Realtime): a deferred
// request whose handler calls Job.Hold before its head is held after its
// response, subscribed to a channel, and what other goroutines Broadcast
// to that channel is written to it. A hold is a connection with no job:
// it costs what an idle keep-alive connection costs, and it counts toward
// MaxConnections, not toward the handler threads.
type Realtime struct {
	// Counter is the event-id counter every process shares: its head is
	// what m0-gap reports.
	Counter *realtime.Counter
	// ReplayFrames is how many published frames the loop journals for
	// clients reconnecting with Last-Event-ID (0: none; m0-gap instead).
	ReplayFrames int
	// Heartbeat is how often a held stream gets ": heartbeat" (0: never).
	Heartbeat time.Duration
}

// holdOutLimit is the most a held client may fall behind (bytes queued
// while a send is under way) before it is dropped: a client that does
// not read holds none of the server's memory for long.
const holdOutLimit = 1 << 20

// ErrNoHold is Job.Hold's answer where a hold cannot be taken: the loop
// has no Config.Realtime, or the head was already posted (HoldWebSocket:
// also a WebSocket over HTTP/2). The handler answers as it would without
// a hold.
var ErrNoHold = errors.New("loop: this connection cannot be held")

// holdAsk is what the handler asked of its job's connection.
type holdAsk struct {
	channel     string
	lastEventID int64
	webSocket   bool
}

// hold is a subscription: a held connection's (slot), or a held HTTP/2
// stream's (stream, hold_http2.go).
type hold struct {
	channel string
	index   int    // in its channel's subscribers
	out     []byte // frames that came while a send was under way
	closing bool   // ": close" is queued: the connection ends after it
	slot    *slot
	stream  *streamHold
}

// holds is the loop's held connections and the frames posted for them.
type holds struct {
	cfg      Realtime
	journal  *realtime.Journal
	channels map[string][]*hold
	count    int
	// heartbeatDue: the next heartbeat (unix ns).
	heartbeatDue int64

	// posted holds the datagrams Broadcast took (each after its length,
	// 4 bytes little-endian) until the loop takes them; news says there
	// are some.
	mu     sync.Mutex
	posted []byte
	spare  []byte
	news   atomic.Bool

	data []byte // a frame's data for a WebSocket hold (loop thread)
}

func newHolds(cfg *Realtime) *holds {
	if cfg == nil {
		return nil
	}
	var start int64
	if cfg.Counter != nil {
		start = cfg.Counter.Head()
	}
	return &holds{
		cfg:      *cfg,
		journal:  realtime.NewJournal(cfg.ReplayFrames, start),
		channels: make(map[string][]*hold),
	}
}

// Hold asks that the connection be held after this response, subscribed
// to channel; lastEventID is the client's Last-Event-ID (0: none), whose
// missed frames follow the response's body. Call it before the head is
// posted: the head then says keep-alive with no framing (the stream runs
// until either side closes) and X-Accel-Buffering: no. Over HTTP/2 the
// stream is held, not the connection (hold_http2.go).
func (j *Job) Hold(channel string, lastEventID int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.loop.holds == nil || j.headPosted || channel == "" {
		return ErrNoHold
	}
	j.hold = &holdAsk{channel: channel, lastEventID: lastEventID}
	return nil
}

// holdFields follow a held stream's own: it is not framed, and a proxy
// must pass each frame on as it comes (nginx buffers otherwise).
const holdFields = "X-Accel-Buffering: no\r\n"

// writeHoldHead is writeJobHead for a held response: keep-alive without
// framing (RFC 9112 §6.3: the body runs to the close). Called with j.mu
// held.
func (l *Loop) writeHoldHead(s *slot, j *Job) {
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	s.send = http1.AppendStatusLine(s.send, j.status)
	l.cfg.Stats.response(j.status)
	s.send = append(s.send, j.fields...)
	s.send = append(s.send, holdFields...)
	// The head of an HTTP/1.0 keep-alive answer to HEAD is the one that
	// says "Connection: keep-alive" and frames nothing; the status line
	// stays HTTP/1.1.
	head := http1.ResponseHead{Status: j.status, Version: http1.Version10, ContentLength: -1, KeepAlive10: true, HeadRequest: true}
	var date *http1.DateCache
	s.send, head.Server, date = l.appendDefaults(s.send, j.fieldsSet)
	s.send, _ = http1.AppendFraming(s.send, &head, date)
	j.mode = http1.BodyUntilClose
	l.cfg.Stats.observe(time.Duration(l.now - j.Arrived))
	j.headWritten = true
}

// startHold turns a connection whose job has finished its held response
// into a hold: the job is released, the client's missed frames are
// queued, and the connection waits for frames. Called with j.mu held;
// returns with it released.
func (l *Loop) startHold(s *slot, j *Job) bool {
	ask := j.hold
	s.job = nil
	j.mu.Unlock()
	l.releaseJob(j)
	h := l.holds
	l.subscribe(s, ask.channel)
	s.state = stateHold
	s.deadline, s.deadlineKind = 0, deadlineNone
	l.setIdle(s)
	if ask.lastEventID > 0 {
		var head int64
		if h.cfg.Counter != nil {
			head = h.cfg.Counter.Head()
		}
		s.send = h.journal.Replay(s.send, ask.channel, ask.lastEventID, head)
	}
	if l.draining && !l.gentleDrain {
		l.drainHold(s, false)
	}
	return true
}

// subscribe puts a connection on its channel's list.
func (l *Loop) subscribe(s *slot, channel string) {
	s.hold = &hold{channel: channel, slot: s}
	l.addHold(s.hold)
}

// addHold puts a subscription on its channel's list.
func (l *Loop) addHold(sub *hold) {
	h := l.holds
	list := h.channels[sub.channel]
	sub.index = len(list)
	h.channels[sub.channel] = append(list, sub)
	h.count++
}

// serveHold is a held connection's turn: what the client sends is
// dropped (an SSE client sends nothing), its end closes the connection,
// and frames queued during the last send go out.
func (l *Loop) serveHold(s *slot) bool {
	s.consume(len(s.input()))
	h := s.hold
	if len(h.out) > 0 {
		if s.send == nil {
			s.send = l.buffers.getSend()
		}
		s.send = append(s.send, h.out...)
		h.out = h.out[:0]
		if cap(h.out) > 64<<10 {
			h.out = nil
		}
	} else if len(s.send) == 0 && s.send != nil {
		l.buffers.putSend(s.send)
		s.send = nil
	}
	if s.peerEOF || h.closing {
		s.closeAfter = true
		return false
	}
	s.recvWanted = true
	return false
}

// unhold takes a closing connection off its channel.
func (l *Loop) unhold(s *slot) {
	l.removeHold(s.hold)
	s.hold = nil
}

// removeHold takes a subscription off its channel's list.
func (l *Loop) removeHold(sub *hold) {
	h := l.holds
	list := h.channels[sub.channel]
	last := len(list) - 1
	moved := list[last]
	list[sub.index] = moved
	moved.index = sub.index
	list[last] = nil
	if last == 0 {
		delete(h.channels, sub.channel)
	} else {
		h.channels[sub.channel] = list[:last]
	}
	h.count--
}

// Holds reports how many connections the loop holds. Loop thread only
// (a health answer's count comes through Stats).
func (l *Loop) Holds() int {
	if l.holds == nil {
		return 0
	}
	return l.holds.count
}

// Broadcast posts one bus datagram (realtime.AppendDatagram's layout) to
// the loop, for every connection held on its channel. Safe from any
// goroutine: it copies the datagram and wakes the loop if it waits.
func (l *Loop) Broadcast(datagram []byte) {
	h := l.holds
	if h == nil || l.exited.Load() {
		return
	}
	h.mu.Lock()
	n := uint32(len(datagram))
	h.posted = append(h.posted, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	h.posted = append(h.posted, datagram...)
	h.mu.Unlock()
	if !h.news.Swap(true) {
		l.kick()
	}
}

// holdNews reports frames posted and not yet taken.
func (l *Loop) holdNews() bool { return l.holds != nil && l.holds.news.Load() }

// serveHolds runs each pass: the frames posted since the last are
// journaled and queued on their channel's connections, and heartbeats
// go out when due.
func (l *Loop) serveHolds() {
	h := l.holds
	if h == nil {
		return
	}
	if h.news.Load() {
		h.news.Store(false)
		h.mu.Lock()
		posted := h.posted
		h.posted, h.spare = h.spare[:0], nil
		h.mu.Unlock()
		for len(posted) >= 4 {
			n := int(uint32(posted[0]) | uint32(posted[1])<<8 | uint32(posted[2])<<16 | uint32(posted[3])<<24)
			l.deliver(posted[4 : 4+n])
			posted = posted[4+n:]
		}
		h.mu.Lock()
		if cap(posted) <= 1<<20 {
			h.spare = posted[:0]
		}
		h.mu.Unlock()
	}
	if h.cfg.Heartbeat > 0 && l.now >= h.heartbeatDue {
		if h.heartbeatDue != 0 {
			for channel := range h.channels {
				l.writeChannel(channel, heartbeatFrame, false)
			}
		}
		h.heartbeatDue = l.now + int64(h.cfg.Heartbeat)
	}
}

// deliver journals one datagram's frame and queues it on its channel's
// connections.
func (l *Loop) deliver(datagram []byte) {
	id, channel, frame, err := realtime.ParseDatagram(datagram)
	if err != nil || len(frame) == 0 || realtime.Reserved(channel) {
		return
	}
	l.holds.journal.Add(id, channel, frame)
	l.writeChannel(string(channel), frame, true)
}

// writeChannel queues b on every connection of channel (webSockets
// false: not on WebSocket holds, which have their pings). Backwards: a
// connection closed on the way (too far behind) leaves the list by a
// swap with its last, which was already written.
func (l *Loop) writeChannel(channel string, b []byte, webSockets bool) {
	for i := len(l.holds.channels[channel]) - 1; i >= 0; i-- {
		list := l.holds.channels[channel]
		if i >= len(list) {
			continue
		}
		switch sub := list[i]; {
		case sub.stream != nil:
			l.streamHoldWrite(sub, b)
		case webSockets || sub.slot.ws == nil:
			l.holdWrite(sub.slot, b)
		}
	}
}

// holdWrite queues bytes on a held connection: into its send buffer, or
// behind the send under way. A client past holdOutLimit behind is closed.
func (l *Loop) holdWrite(s *slot, b []byte) {
	sub := s.hold
	if s.closing || sub.closing {
		return
	}
	if s.ws != nil {
		l.holdWriteWebSocket(s.ws, b)
		return
	}
	if s.sending {
		// The send under way is not taken yet: what waits behind it
		// counts with it.
		if len(s.send)+len(sub.out)+len(b) > holdOutLimit {
			l.closeSlot(s)
			return
		}
		sub.out = append(sub.out, b...)
		return
	}
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	s.send = append(s.send, b...)
	l.touch(s)
}

// drainHold ends a held stream at a shutdown: ": close" and the close,
// or the close alone at the deadline.
func (l *Loop) drainHold(s *slot, force bool) {
	if force {
		l.closeSlot(s)
		return
	}
	if s.hold.closing {
		return
	}
	l.holdWrite(s, closeFrame)
	s.hold.closing = true
	if !s.sending {
		s.closeAfter = true
	}
	l.touch(s)
}

var (
	heartbeatFrame = []byte(realtime.Heartbeat)
	closeFrame     = []byte(realtime.Close)
)
