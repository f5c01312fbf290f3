package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/ws"
)

// native is a Go handler built into the binary: an inline part that runs
// on the loop thread, and, for handlers that block or read the body, a
// deferred part run on handler goroutines.
type native struct {
	inline   loop.Handler
	deferred func(j *loop.Job)
	setup    func(logf func(string, ...any)) // before the loop starts, if set
}

var natives = map[string]native{
	"hello":   {inline: loop.HandlerFunc(serveHello)},
	"ws-echo": {inline: loop.HandlerFunc(serveWebSocketEcho)},
	"echo":    {inline: deferAll, deferred: serveEcho},
	"slow":    {inline: deferAll, deferred: serveSlow},
}

// NativeNames lists the native handlers, for messages and --help.
func NativeNames() string {
	names := make([]string, 0, len(natives))
	for name := range natives {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

var deferAll = loop.HandlerFunc(func(_ *loop.Request, w *loop.ResponseWriter) { w.Defer() })

var helloBody = []byte("Hello, World!")

// serveHello is the plain-text benchmark answer, inline on the loop thread.
func serveHello(_ *loop.Request, w *loop.ResponseWriter) {
	w.AddHeader("Content-Type", "text/plain")
	w.Respond(200, helloBody)
}

// echoReply is what echo answers: the request as the server parsed it.
type echoReply struct {
	Method  string      `json:"method"`
	Target  string      `json:"target"`
	Headers [][2]string `json:"headers"`
	Body    string      `json:"body"`
}

// serveEcho answers with the request as JSON, or, with "raw" in the query,
// streams the body back as it arrives (byte-exact, any size).
func serveEcho(j *loop.Job) {
	req := &j.Request
	query, _ := url.ParseQuery(string(req.Bytes(req.Query)))
	if _, raw := query["raw"]; raw {
		echoRaw(j)
		return
	}
	body, err := io.ReadAll(j)
	if err != nil {
		finishWithError(j, err)
		return
	}
	reply := echoReply{
		Method:  string(req.Bytes(req.Method)),
		Target:  string(req.Bytes(req.Target)),
		Headers: make([][2]string, 0, req.Header.Len()),
		Body:    string(body),
	}
	for i := 0; i < req.Header.Len(); i++ {
		name, value := req.Header.Field(i)
		reply.Headers = append(reply.Headers, [2]string{string(name), string(value)})
	}
	out, err := json.Marshal(&reply)
	if err != nil {
		j.Abort()
		return
	}
	j.SetHeader("Content-Type", "application/json")
	if j.WriteHeader(200, int64(len(out))) == nil {
		j.Write(out)
	}
	j.Finish()
}

// echoRaw streams the request body back: chunked when the request was,
// with its length otherwise.
func echoRaw(j *loop.Job) {
	length := int64(-1)
	if !j.Request.Chunked {
		length = max(j.Request.ContentLength, 0)
	}
	j.SetHeader("Content-Type", "application/octet-stream")
	if err := j.WriteHeader(200, length); err != nil {
		j.Finish()
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := j.Read(buf)
		if n > 0 {
			if _, werr := j.Write(buf[:n]); werr != nil {
				j.Abort()
				return
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			j.Abort()
			return
		}
	}
	j.Finish()
}

// finishWithError ends a job whose body could not be read. The loop has
// already answered a body it refused (413, 400); anything else is a
// dropped connection.
func finishWithError(j *loop.Job, err error) {
	if errors.Is(err, loop.ErrBodyTooLarge) || errors.Is(err, loop.ErrAborted) {
		j.Finish()
		return
	}
	j.Abort()
}

// serveSlow answers after ?ms=N milliseconds, streaming ?chunks=K chunks
// (one line each, K*ms spread evenly) with an unknown length.
func serveSlow(j *loop.Job) {
	query, _ := url.ParseQuery(string(j.Request.Bytes(j.Request.Query)))
	ms, _ := strconv.Atoi(query.Get("ms"))
	chunks, _ := strconv.Atoi(query.Get("chunks"))
	chunks = max(chunks, 1)
	j.SetHeader("Content-Type", "text/plain")
	if err := j.WriteHeader(200, -1); err != nil {
		j.Finish()
		return
	}
	pause := time.Duration(ms) * time.Millisecond / time.Duration(chunks)
	for i := 0; i < chunks; i++ {
		time.Sleep(pause)
		if _, err := j.Write([]byte("chunk " + strconv.Itoa(i) + "\n")); err != nil {
			j.Abort()
			return
		}
	}
	j.Finish()
}

// serveWebSocketEcho accepts WebSocket upgrades (with the first
// subprotocol offered) and echoes every message, on the loop thread; other
// requests get the hello answer. It is the
// loop's own floor in the WebSocket benchmark.
func serveWebSocketEcho(req *loop.Request, w *loop.ResponseWriter) {
	if req.IsWebSocket() {
		// The client's first subprotocol, if it offers any.
		var offered [4][]byte
		var protocol []byte
		if p := req.WebSocketProtocols(offered[:0]); len(p) > 0 {
			protocol = p[0]
		}
		// A refused handshake is answered by AcceptWebSocket itself.
		w.AcceptWebSocket(webSocketEcho{}, protocol)
		return
	}
	serveHello(req, w)
}

type webSocketEcho struct{}

func (webSocketEcho) OnMessage(c *loop.WebSocket, op ws.Opcode, payload []byte) bool {
	c.Send(op, payload)
	return false
}

func (webSocketEcho) OnClose(*loop.WebSocket, ws.CloseCode, []byte) {}
