package loop

import (
	"slices"

	"github.com/m0serve/m0serve/http2"
	"golang.org/x/net/http2/hpack"
)

// A hold over HTTP/2: a held response's stream stays open after the
// view's head and body (no END_STREAM), subscribed to its channel as a
// held connection is (hold.go); the job is released, so the stream costs
// what an open stream costs and counts toward the connection's
// MAX_CONCURRENT_STREAMS. Frames go out as DATA under the stream's flow
// control. A stream the client keeps shut past --send-timeout, or that
// falls more than holdOutLimit behind, is reset (CANCEL), not the
// connection; the client's RST_STREAM ends the subscription; a drain
// sends ": close" and END_STREAM before the final GOAWAY. WebSocket
// holds (M0-Hold: websocket) stay HTTP/1.1's: an RFC 8441 stream has no
// slot for its inbound messages to name.

// streamHold is what a held stream has beside its subscription.
type streamHold struct {
	hc *h2conn
	st *http2.Stream
	// sendAt is when the stream's window last opened, or was not what
	// held its frames (--send-timeout).
	sendAt int64
	ready  bool // in hc.holdReady
	done   bool // the stream is given back
}

// holdStreamFields follow a held stream's own: a proxy must pass each
// frame on as it comes.
var holdStreamFields = []hpack.HeaderField{{Name: "x-accel-buffering", Value: "no"}}

// startStreamHold turns a stream whose job has finished its held
// response into a hold: the job lets go of the stream and is released,
// the client's missed frames are queued. Called with j.mu held; returns
// with it released.
func (l *Loop) startStreamHold(hc *h2conn, j *Job) {
	ask, st := j.hold, j.stream
	if j.h2Unacked > 0 {
		hc.conn.Consumed(st, j.h2Unacked)
		j.h2Unacked = 0
	}
	j.h2, j.stream, j.h2Ready = nil, nil, false
	if i := slices.Index(hc.jobs, j); i >= 0 {
		last := len(hc.jobs) - 1
		hc.jobs[i], hc.jobs[last] = hc.jobs[last], nil
		hc.jobs = hc.jobs[:last]
	}
	j.mu.Unlock()
	l.releaseJob(j)
	sub := &hold{channel: ask.channel, stream: &streamHold{hc: hc, st: st, sendAt: l.now}}
	st.Value = sub
	hc.holds = append(hc.holds, sub)
	l.addHold(sub)
	if ask.lastEventID > 0 {
		var head int64
		if l.holds.cfg.Counter != nil {
			head = l.holds.cfg.Counter.Head()
		}
		sub.out = l.holds.journal.Replay(sub.out, ask.channel, ask.lastEventID, head)
		hc.markHold(sub)
	}
	if hc.shutdown {
		l.drainStreamHold(sub)
	}
}

// markHold queues sub for its connection's next round.
func (hc *h2conn) markHold(sub *hold) {
	if t := sub.stream; !t.ready && !t.done {
		t.ready = true
		hc.holdReady = append(hc.holdReady, sub)
	}
}

// streamHoldWrite queues a frame on a held stream; a stream more than
// holdOutLimit behind is reset.
func (l *Loop) streamHoldWrite(sub *hold, b []byte) {
	t := sub.stream
	if t.done || sub.closing {
		return
	}
	if len(sub.out)+len(b) > holdOutLimit {
		t.hc.conn.Cancel(t.st) // Reset ends the subscription
		l.h2Kick(t.hc)
		return
	}
	sub.out = append(sub.out, b...)
	t.hc.markHold(sub)
	l.h2Kick(t.hc)
}

// serviceStreamHolds moves the ready streams' frames into DATA, as far
// as the windows and the send's high water let them (serveHTTP2).
func (l *Loop) serviceStreamHolds(s *slot, hc *h2conn) {
	ready := hc.holdReady
	hc.holdReady = nil
	for _, sub := range ready {
		sub.stream.ready = false
		l.serviceStreamHold(s, hc, sub)
	}
	clear(ready)
	if hc.holdReady == nil {
		hc.holdReady = ready[:0]
	}
}

// serviceStreamHold writes what a held stream has queued; a closing one
// gets END_STREAM once it is out and is given back.
func (l *Loop) serviceStreamHold(s *slot, hc *h2conn, sub *hold) {
	t := sub.stream
	if t.done {
		return
	}
	if len(sub.out) > 0 {
		limit, paused := len(sub.out), false
		if room := h2SendHighWater - len(s.send) - len(hc.conn.Output()); limit > room {
			limit, paused = max(room, 0), true
		}
		n := 0
		if limit > 0 {
			n = hc.conn.WriteData(t.st, sub.out[:limit], false)
		}
		sub.out = sub.out[:copy(sub.out, sub.out[n:])]
		if len(sub.out) == 0 && cap(sub.out) > 64<<10 {
			sub.out = nil
		}
		if paused && n == limit {
			hc.markHold(sub) // the rest after this send; else WindowOpened
		}
	}
	if sub.closing && len(sub.out) == 0 {
		hc.conn.WriteData(t.st, nil, true)
		l.releaseStreamHold(sub)
	}
}

// releaseStreamHold ends the subscription and gives the stream back
// (reset if it did not end).
func (l *Loop) releaseStreamHold(sub *hold) {
	t := sub.stream
	if t.done {
		return
	}
	t.done = true
	t.st.Value = nil
	l.removeHold(sub)
	hc := t.hc
	if i := slices.Index(hc.holds, sub); i >= 0 {
		last := len(hc.holds) - 1
		hc.holds[i], hc.holds[last] = hc.holds[last], nil
		hc.holds = hc.holds[:last]
	}
	sub.out = nil
	if !hc.closed {
		hc.conn.Done(t.st)
	}
}

// drainStreamHold ends a held stream at a shutdown: ": close", then
// END_STREAM once it is out.
func (l *Loop) drainStreamHold(sub *hold) {
	if sub.closing || sub.stream.done {
		return
	}
	sub.out = append(sub.out, closeFrame...)
	sub.closing = true
	sub.stream.hc.markHold(sub)
}

// drainStreamHolds ends a draining connection's held streams; their
// ": close" and END_STREAM go ahead of the GOAWAY when the windows let
// them.
func (l *Loop) drainStreamHolds(s *slot, hc *h2conn) {
	for _, sub := range hc.holds {
		l.drainStreamHold(sub)
	}
	if !hc.serving {
		l.serviceStreamHolds(s, hc) // into the codec's output, ahead of the GOAWAY
	}
}

// closeStreamHolds: the connection is gone; its subscriptions end.
func (l *Loop) closeStreamHolds(hc *h2conn) {
	for _, sub := range hc.holds {
		sub.stream.done = true
		sub.out = nil
		l.removeHold(sub)
	}
	hc.holds, hc.holdReady = nil, nil
}

// streamHoldSendTimeouts resets the held streams whose own window the
// client has kept shut for --send-timeout, and reports whether it reset
// any.
func (l *Loop) streamHoldSendTimeouts(hc *h2conn) bool {
	cut := false
	// Backwards: a reset stream leaves the list by a swap with its last,
	// which was already looked at.
	for i := len(hc.holds) - 1; i >= 0; i-- {
		if i >= len(hc.holds) {
			continue
		}
		sub := hc.holds[i]
		t := sub.stream
		switch {
		case t.done || len(sub.out) == 0 || !t.st.WindowShut():
			t.sendAt = l.now
		case l.now-t.sendAt >= int64(l.cfg.SendTimeout):
			if n, ok := l.sendTimeouts.allow(l.now); ok {
				l.cfg.Logf("m0serve: an HTTP/2 client kept a held stream's flow-control window shut for --send-timeout (%v): stream reset (%d since the last report)", l.cfg.SendTimeout, n)
			}
			hc.conn.Cancel(t.st)
			cut = true
		}
	}
	return cut
}
