package server

import (
	"bytes"
	"strconv"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
)

// The instruction fields a view's response holds its connection with
// (the Mojo m0serve's, after Pushpin's GRIP): M0-Hold: stream, and the
// channel in M0-Channel. Addressed to the server, they never reach the
// client, with --realtime or without.
const (
	holdName    = "m0-hold"
	channelName = "m0-channel"
)

// holdField reports an instruction field, dropped from every response.
func holdField(name []byte) bool {
	if len(name) < len(holdName) || name[0]|0x20 != 'm' || name[1] != '0' || name[2] != '-' {
		return false
	}
	return bytes.EqualFold(name, []byte(holdName)) || bytes.EqualFold(name, []byte(channelName))
}

// holdAsked returns a response's hold mode and channel (nil: none).
func holdAsked(resp *pybridge.Response) (mode, channel []byte) {
	for i := 0; i < resp.HeaderLen(); i++ {
		name, value := resp.Header(i)
		if !holdField(name) {
			continue
		}
		if len(name) == len(holdName) {
			mode = value
		} else {
			channel = value
		}
	}
	return mode, channel
}

// holdWebSocket accepts a WebSocket handshake the view approved with
// M0-Hold: websocket and a channel: the loop answers 101 (the view's
// response goes nowhere) and holds the connection. It reports whether it
// did; a view's M0-Hold: websocket to a request that is not a handshake
// is served as the response it is.
func (w *bridgeJob) holdWebSocket(resp *pybridge.Response) bool {
	lj := w.loopJob
	if !w.pool.realtime || !lj.IsWebSocket() || resp.Status() != 200 {
		return false
	}
	mode, channel := holdAsked(resp)
	if !bytes.EqualFold(mode, []byte("websocket")) || len(channel) == 0 {
		return false
	}
	return lj.HoldWebSocket(string(channel)) == nil
}

// hold asks the loop to hold the connection when the response says so: a
// 200 with M0-Hold: stream and a channel. The client's Last-Event-ID
// says what it has; over HTTP/2 the stream is held. Anything else
// (another status, no channel) is served as the ordinary response it
// is, as under a server without holds.
func (w *bridgeJob) hold(resp *pybridge.Response) bool {
	if resp.Status() != 200 {
		return false
	}
	mode, channel := holdAsked(resp)
	if !bytes.EqualFold(mode, []byte("stream")) || len(channel) == 0 {
		return false
	}
	lj := w.loopJob
	last, _ := strconv.ParseInt(string(bytes.TrimSpace(lj.Request.Header.Get("last-event-id"))), 10, 64)
	return lj.Hold(string(channel), last) == nil
}

// realtimeRequests is a WSGI app's handler under --realtime: every request
// is deferred, a WebSocket handshake as one (the view may hold it), and
// the path of a held WebSocket's messages is the loop's alone.
var realtimeRequests = loop.HandlerFunc(func(req *loop.Request, w *loop.ResponseWriter) {
	if string(req.Bytes(req.Path)) == loop.InboundPath {
		w.Respond(404, notFound)
		return
	}
	if req.IsWebSocket() {
		w.DeferWebSocket()
		return
	}
	w.Defer()
})

var notFound = []byte("not found\n")
