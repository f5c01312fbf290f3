package realtime

import (
	"bytes"
	"strconv"
)

// The comments the server writes on a held stream itself: a heartbeat
// keeps proxies from timing an idle stream out; close says the server is
// going away (a shutdown), so the client reconnects elsewhere.
const (
	Heartbeat = ": heartbeat\n\n"
	Close     = ": close\n\n"
)

// GapEvent is the event a client reconnecting with a Last-Event-ID the
// journal cannot continue from gets: its data says what it asked for and
// where the counter is, so it refetches state.
const GapEvent = "m0-gap"

// AppendEvent appends one SSE event (WHATWG HTML §9.2.6): an id line when
// id > 0, an event line when event is not empty, and one data line per
// line of data (a lone "data:" line for empty data), then the blank line.
// The field order and the splitting are m0pub.py's sse_event.
func AppendEvent(dst []byte, id int64, event string, data []byte) []byte {
	if id > 0 {
		dst = append(dst, "id: "...)
		dst = strconv.AppendInt(dst, id, 10)
		dst = append(dst, '\n')
	}
	if event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	if len(data) == 0 {
		return append(dst, "data: \n\n"...)
	}
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			line, rest = data[:i], data[i+1:]
			if data[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
				rest = rest[1:]
			}
		}
		dst = append(dst, "data: "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
		data = rest
	}
	return append(dst, '\n')
}

// AppendGap appends the m0-gap event for a client that asked for the
// frames after lastEventID when head is the counter's last id.
func AppendGap(dst []byte, lastEventID, head int64) []byte {
	dst = append(dst, "event: "+GapEvent+"\ndata: {\"last_event_id\":"...)
	dst = strconv.AppendInt(dst, lastEventID, 10)
	dst = append(dst, ",\"head\":"...)
	dst = strconv.AppendInt(dst, head, 10)
	return append(dst, "}\n\n"...)
}

// FrameData returns the data of an SSE frame's data lines joined by
// newlines, for a WebSocket hold, which carries data only.
func FrameData(dst, frame []byte) []byte {
	first := true
	for len(frame) > 0 {
		line := frame
		if i := bytes.IndexByte(frame, '\n'); i >= 0 {
			line, frame = frame[:i], frame[i+1:]
		} else {
			frame = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		value, ok := bytes.CutPrefix(line, []byte("data"))
		if !ok || len(value) > 0 && value[0] != ':' {
			continue
		}
		if len(value) > 0 {
			value = value[1:]
			value = bytes.TrimPrefix(value, []byte{' '})
		}
		if !first {
			dst = append(dst, '\n')
		}
		first = false
		dst = append(dst, value...)
	}
	return dst
}
