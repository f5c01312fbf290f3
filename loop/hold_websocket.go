package loop

import (
	"strconv"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/realtime"
	"github.com/m0serve/m0serve/ws"
)

// A WebSocket hold (the Mojo m0serve's M0-Hold: websocket): the handler
// approves a WebSocket handshake, the loop answers 101 and holds the
// connection on a channel. Published frames go to it as text messages
// (their data only), and each message the client sends becomes a request
// to the app, POST InboundPath with the channel, the connection and the
// opcode as fields and the message as body: a job with no connection,
// whose response goes nowhere.

// InboundPath is the path of a held WebSocket's messages, as requests to
// the app. A request from the network for it is refused (the server's
// handler answers 404), so only the loop makes one.
const InboundPath = "/ws/message"

// HoldWebSocket accepts a deferred WebSocket handshake (IsWebSocket) and
// holds the connection on channel; the job ends here, as with
// AcceptWebSocket.
func (j *Job) HoldWebSocket(channel string) error {
	j.mu.Lock()
	if j.loop.holds == nil || !j.webSocket || j.h2 != nil || j.headPosted || channel == "" {
		j.mu.Unlock()
		return ErrNoHold
	}
	j.hold = &holdAsk{channel: channel, webSocket: true}
	j.mu.Unlock()
	if _, err := j.AcceptWebSocket(holdSocket{channel: channel}, nil); err != nil {
		j.mu.Lock()
		j.hold = nil
		j.mu.Unlock()
		return err
	}
	return nil
}

// holdSocket is a held WebSocket's handler: each message is a request.
type holdSocket struct{ channel string }

func (h holdSocket) OnMessage(c *WebSocket, op ws.Opcode, payload []byte) bool {
	c.loop.postInbound(c, h.channel, op, payload)
	return false
}

func (holdSocket) OnClose(*WebSocket, ws.CloseCode, []byte) {}

// holdWebSocketJob subscribes a connection whose held handshake the loop
// has just answered (acceptJobWebSocket).
func (l *Loop) holdWebSocketJob(s *slot, j *Job) {
	if j.hold != nil && j.hold.webSocket && l.holds != nil {
		l.subscribe(s, j.hold.channel)
		l.setIdle(s)
	}
}

// holdWriteWebSocket sends a published frame's data as a text message. A
// client more than holdOutLimit behind is closed.
func (l *Loop) holdWriteWebSocket(c *WebSocket, frame []byte) {
	if !c.live() || c.state != wsOpen {
		return
	}
	if c.unsent() > holdOutLimit {
		l.closeSlot(c.slot)
		return
	}
	h := l.holds
	h.data = realtime.FrameData(h.data[:0], frame)
	o := c.output()
	*o = ws.AppendMessage(*o, ws.OpText, h.data, nil)
	c.wake(false)
}

// postInbound hands a held WebSocket's message to the app as a request.
// A message that finds the handler queue full waits behind it, and is
// dropped if the queue is still full at the next pass's retry.
func (l *Loop) postInbound(c *WebSocket, channel string, op ws.Opcode, payload []byte) {
	if l.cfg.Jobs == nil {
		return
	}
	s := c.slot
	j := l.getJob()
	head := append(j.Head[:0], "POST "+InboundPath+" HTTP/1.1\r\nHost: m0serve\r\nM0-Channel: "...)
	head = append(head, channel...)
	head = append(head, "\r\nM0-Slot: "...)
	head = strconv.AppendUint(head, uint64(s.index), 10)
	head = append(head, "\r\nM0-Opcode: "...)
	head = strconv.AppendUint(head, uint64(op), 10)
	head = append(head, "\r\nContent-Length: "...)
	head = strconv.AppendInt(head, int64(len(payload)), 10)
	j.Head = append(head, "\r\n\r\n"...)
	parser := http1.Parser{Limits: l.cfg.Limits}
	if _, err := parser.Parse(j.Head, &j.Request); err != nil {
		// A channel that is not a field value: the app named it, so
		// nothing the client can fix.
		j.finished, j.detached = true, true
		l.releaseJob(j)
		return
	}
	j.Request.Rebase(j.Head)
	j.RemoteAddr = s.remoteAddr()
	j.TLS = nil
	j.Arrived = l.now
	j.inbox = append(j.inbox[:0], payload...)
	j.bodyDone, j.detached, j.inbound = true, true, true
	j.queue = l.cfg.Jobs
	l.queueJob(j)
}
