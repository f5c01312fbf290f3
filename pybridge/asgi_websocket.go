package pybridge

/*
#include "asgi.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// ErrWebSocketGone is what Port.AcceptWebSocket returns when the client left
// before the accept: the app's send raises ClientDisconnected. Any other
// error raises ValueError (a header or subprotocol the server refused).
var ErrWebSocketGone = errors.New("pybridge: the WebSocket client left before the accept")

// WebSocketEvents takes an accepted WebSocket's news for the app.
type WebSocketEvents interface {
	// Message is a whole client message, valid during the call. The
	// server counts it untaken until WebSocketConn.Taken.
	Message(binary bool, payload []byte)
	// Closed: the connection ended with the client's close code (1005
	// when its Close had none, 1006 when the transport died) and reason.
	Closed(code int, reason []byte)
}

// WebSocketConn is an accepted WebSocket as the executor drives it, with
// the GIL held on the executor's thread (driven, the loop thread): no
// method may block.
type WebSocketConn interface {
	// Post queues a whole message without waiting. full says the output
	// is above its high-water mark with it; the send then waits until the
	// connection calls the function SetWritten gave it (closed: the
	// connection ended, and the send raises). It fails once the
	// connection is closing or closed.
	Post(binary bool, payload []byte) (full bool, err error)
	// SetWritten is called once, right after the accept.
	SetWritten(f func(closed bool))
	// Close starts the close handshake with code and reason.
	Close(code int, reason string)
	// Taken: the app took one message Message delivered.
	Taken()
}

// asgiWebSocket is a slot's WebSocketEvents: it posts each message to
// the executor's thread as a body read's result is posted.
type asgiWebSocket struct {
	slot *asgiSlot
	ex   *ASGIExecutor
}

func (w *asgiWebSocket) Message(binary bool, payload []byte) {
	e := asgiEvent{ws: w, kind: eventWSMessage, data: append([]byte(nil), payload...)}
	if binary {
		e.n = 1
	}
	w.ex.post(e)
}

func (w *asgiWebSocket) Closed(code int, reason []byte) {
	w.ex.post(asgiEvent{ws: w, kind: eventWSClosed, n: code, data: append([]byte(nil), reason...)})
}

// deliverWebSocket runs on the executor's thread: a WebSocket's news to
// its C object, unless the slot has moved on to another request.
func (ex *ASGIExecutor) deliverWebSocket(e *asgiEvent) {
	s := e.ws.slot
	if s.ws != e.ws {
		return
	}
	if e.kind == eventWSWritten {
		// The posted message that filled the output has gone on (or the
		// connection ended): its send resumes.
		s.endWriteWait(e.err != nil)
		return
	}
	p := (*C.char)(unsafe.Pointer(unsafe.SliceData(e.data)))
	if e.kind == eventWSMessage {
		C.m0_asgi_ws_message(s.conn, C.int(e.n), p, C.long(len(e.data)))
	} else {
		C.m0_asgi_ws_closed(s.conn, C.int(e.n), p, C.long(len(e.data)))
	}
}

//export m0goASGIWSAccept
func m0goASGIWSAccept(slot C.int, protocol *C.char, n C.size_t, headers *C.m0_response) (rc C.int) {
	s := asgiSlots[slot]
	rc = -2 // what a panic in the acceptor leaves
	defer s.ex.catch()
	if s.port == nil {
		return -2
	}
	var p []byte
	if protocol != nil {
		p = unsafe.Slice((*byte)(unsafe.Pointer(protocol)), int(n))
	}
	events := &asgiWebSocket{slot: s, ex: s.ex}
	conn, err := s.port.AcceptWebSocket(p, s.job.Response, events)
	if errors.Is(err, ErrWebSocketGone) {
		return -1
	}
	if err != nil {
		return -2
	}
	s.ws, s.wsConn = events, conn
	ex := s.ex
	conn.SetWritten(func(closed bool) {
		e := asgiEvent{ws: events, kind: eventWSWritten}
		if closed {
			e.err = ErrWebSocketGone
		}
		ex.post(e)
	})
	return 0
}

//export m0goASGIWSSend
func m0goASGIWSSend(slot C.int, binary C.int, p *C.char, n C.size_t) (done C.int) {
	s := asgiSlots[slot]
	defer s.ex.catch()
	return cbool(s.write(asgiWrite{p: unsafe.Pointer(p), n: int(n), message: true, binary: binary != 0}))
}

//export m0goASGIWSClose
func m0goASGIWSClose(slot C.int, code C.int, reason *C.char, n C.size_t) {
	s := asgiSlots[slot]
	defer s.ex.catch()
	if s.wsConn != nil {
		s.wsConn.Close(int(code), C.GoStringN(reason, C.int(n)))
	}
}

//export m0goASGIWSTaken
func m0goASGIWSTaken(slot C.int) {
	s := asgiSlots[slot]
	defer s.ex.catch()
	if s.wsConn != nil {
		s.wsConn.Taken()
	}
}
