package pybridge

import "errors"

// Port is an ASGI job's Writer: the executor's one way to the server for
// the job. Every method is called on the executor's thread (driven, the
// loop thread) with the GIL held, and none may block, so nothing the app
// does can block the thread it runs on: what cannot be done at once is
// answered later, through the executor (Written, ClientGone) or the
// accepted WebSocketConn's written function.
type Port interface {
	// WriteHead: the response's status and headers are final; its first
	// body piece follows.
	WriteHead(resp *Response) error
	// Post copies all of p, a streamed body piece. full says the server's
	// output is past its limit with it: the send then waits until the
	// server calls ASGIExecutor.Written for the job (or ClientGone).
	Post(p []byte) (full bool, err error)
	// WriteTrailers takes http.response.trailers' fields (trailers'
	// headers), once, after the last body piece.
	WriteTrailers(trailers *Response) error
	// AcceptWebSocket is the app's websocket.accept, for a job whose
	// Request.WebSocket is set: protocol is the subprotocol chosen (one
	// the client offered), headers holds the app's extra fields (Header
	// and HeaderLen), and events is where the server reports the
	// connection's messages and its end, from any goroutine. After it
	// succeeds the job completes Upgraded.
	AcceptWebSocket(protocol []byte, headers *Response, events WebSocketEvents) (WebSocketConn, error)
	// ClientGoneAtStart reports a client that left (closed, as for
	// ClientGone) or ended its input (inputEnded, as for
	// ClientInputEnded) before the executor started the job: ClientGone
	// for a job not yet started is ignored (it could be a note about the
	// job's previous use), so the executor asks as it starts it.
	ClientGoneAtStart() (closed, inputEnded bool)
}

// TryReader is an ASGI job's Body: read without waiting, on the
// executor's thread (driven, the loop thread) with the GIL held. TryRead
// returns what has arrived, io.EOF at the end; with nothing yet it
// returns pending, and the server calls ASGIExecutor.Readable for the job
// once there is news (or ClientGone).
type TryReader interface {
	TryRead(p []byte) (n int, pending bool, err error)
}

// errNotTryReader and errNotPort fail the app's receive or send when a
// job's Body or Writer could only be driven by blocking: a bug in the
// server, said rather than hidden behind a thread.
var (
	errNotTryReader = errors.New("pybridge: an ASGI job's Body must be a TryReader")
	errNotPort      = errors.New("pybridge: an ASGI job's Writer must be a Port")
)

// errExecutorStopped ends a body read still waiting when the executor
// stops (abandonWaits): the receive returns http.disconnect.
var errExecutorStopped = errors.New("pybridge: the ASGI executor stopped")
