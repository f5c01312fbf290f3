package server

import (
	"bytes"
	"strconv"

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

// hold asks the loop to hold the connection when the response says so: a
// 200 with M0-Hold: stream and a channel. The client's Last-Event-ID
// says what it has. Anything else (another status, no channel, HTTP/2)
// is served as the ordinary response it is, as under a server without
// holds.
func (w *bridgeJob) hold(resp *pybridge.Response) bool {
	if resp.Status() != 200 {
		return false
	}
	var mode, channel []byte
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
	if !bytes.EqualFold(mode, []byte("stream")) || len(channel) == 0 {
		return false
	}
	lj := w.loopJob
	last, _ := strconv.ParseInt(string(bytes.TrimSpace(lj.Request.Header.Get("last-event-id"))), 10, 64)
	return lj.Hold(string(channel), last) == nil
}
