package server

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
	"github.com/m0serve/m0serve/ws"
	"golang.org/x/sys/unix"
)

// asgiLoops and asgiLifespans map --loop and --lifespan to the bridge's.
var (
	asgiLoops = map[string]pybridge.Loop{
		"auto": pybridge.LoopAuto, "asyncio": pybridge.LoopAsyncio, "uvloop": pybridge.LoopUvloop,
	}
	asgiLifespans = map[string]pybridge.Lifespan{
		"auto": pybridge.LifespanAuto, "on": pybridge.LifespanOn, "off": pybridge.LifespanOff,
	}
)

// servesASGI picks the executor by configuration: --interface asgi runs
// any app on the event loop (an ASGI 2 double-callable class loads as a
// plain callable, so the bridge's Interface says WSGI for it), and auto
// follows what the bridge detected (a coroutine function, or an object
// whose __call__ is one).
func servesASGI(cfg *Config, app *pybridge.App) bool {
	switch cfg.Interface {
	case "asgi":
		return true
	case "wsgi":
		return false
	}
	return app.Interface == pybridge.ASGI
}

// asgiOnLoopThread resolves --asgi-thread: the loop thread steps
// asyncio's event loop unless the executor or uvloop was asked for, or
// --request-timeout, whose 504 for a request stuck in the app comes from
// the loop thread.
func asgiOnLoopThread(cfg *Config) bool {
	switch cfg.ASGIThread {
	case "loop":
		return true
	case "executor":
		return false
	}
	return cfg.Loop != "uvloop" && cfg.RequestTimeout == 0
}

// startASGI starts the executor on the pool and returns once lifespan
// startup is over. On failure everything started is stopped and Python
// is finalised.
func (py *python) startASGI(cfg *Config, app *pybridge.App, listener *Listener) error {
	py.pool.asgi = true
	ex, err := py.interp.StartASGI(app, pybridge.ASGIOptions{
		Loop:       asgiLoops[cfg.Loop],
		Lifespan:   asgiLifespans[cfg.Lifespan],
		ServerName: listener.serverName(),
		URLScheme:  cfg.urlScheme(),
		ServerPort: listener.serverPort(),
		// The loop thread must not wait on the GIL the WSGI mounts'
		// handler threads hold.
		Driven:  asgiOnLoopThread(cfg) && py.wsgiPool == nil,
		Mounted: mountedASGI(py.mounts),
	}, py.pool, py.pool)
	if err != nil {
		py.queue.Close()
		if py.wsgiHandlers != nil {
			py.wsgiQueue.Close()
			py.wsgiHandlers.Wait()
		}
		py.interp.Close()
		var startup *pybridge.StartupError
		if errors.As(err, &startup) {
			return &LifespanError{startup}
		}
		var missing *pybridge.MissingLoopError
		if errors.As(err, &missing) {
			return &ConfigError{Flag: "loop", Reason: fmt.Sprintf("%s: the package %s is not installed where the app imports from (%s): install it there (pip install %s), or --loop auto",
				missing.Module, missing.Module, pythonServing(cfg), missing.Module)}
		}
		return &AppLoadError{err}
	}
	py.executor = ex
	py.pool.executor = ex
	return nil
}

// mountedASGI are the ASGI mounts beside the first, which the executor
// serves too: each job names its mount's app (bridgePool.wrap).
func mountedASGI(mounts mountTable) []*pybridge.App {
	if apps := mounts.asgiApps(); len(apps) > 1 {
		return apps[1:]
	}
	return nil
}

// jobGone is the loop's word (Config.OnJobGone) that the client of a job
// still in the app has gone (the connection closed) or ended its input (a
// half-close, which still takes the response): a task awaiting receive
// learns of it now rather than at its next send. It runs on the loop thread with the loop job
// locked, so the job cannot complete and be handed out again meanwhile
// (the executor delivers such notes before it starts new jobs). The flag
// covers a job the executor has not started yet, whose ClientGone note
// would be ignored: the executor reads it as it starts the job.
func (p *bridgePool) jobGone(owner any, how loop.JobGone) {
	// The job's own pool: a WSGI mount's job beside the executor is
	// not the executor's.
	w, ok := owner.(*bridgeJob)
	if !ok || w.pool.executor == nil {
		return
	}
	if how == loop.InputEnded {
		w.inputEnded.Store(true)
		w.pool.executor.ClientInputEnded(&w.job)
		return
	}
	w.gone.Store(true)
	w.pool.executor.ClientGone(&w.job)
}

// jobWritten is the loop's word (Config.OnJobWritten) that the outbox a
// Post left full has gone to the connection: the task's send resumes.
// On the loop thread, under the loop job's lock, as jobGone.
func (p *bridgePool) jobWritten(owner any) {
	if w, ok := owner.(*bridgeJob); ok && w.pool.executor != nil {
		w.pool.executor.Written(&w.job)
	}
}

// jobReadable is the loop's word (Config.OnJobReadable) that a body a
// TryRead found empty has news: the task's receive goes on. On the loop
// thread, under the loop job's lock, as jobGone.
func (p *bridgePool) jobReadable(owner any) {
	if w, ok := owner.(*bridgeJob); ok && w.pool.executor != nil {
		w.pool.executor.Readable(&w.job)
	}
}

// ClientGoneAtStart implements pybridge.Port.
func (w *bridgeJob) ClientGoneAtStart() (closed, inputEnded bool) {
	return w.gone.Load(), w.inputEnded.Load()
}

// asgiRequests hands every request to the ASGI executor; a WebSocket
// opening handshake goes as a job marked as one (the loop answers a bad
// handshake itself), which the app accepts or denies. With --ws none an
// upgrade request is a plain HTTP request to the app.
type asgiRequests struct{}

// ServeInline implements loop.Handler.
func (asgiRequests) ServeInline(req *loop.Request, w *loop.ResponseWriter) {
	if req.IsWebSocket() {
		w.DeferWebSocket()
		return
	}
	w.Defer()
}

// AcceptWebSocket implements pybridge.Port: the app's
// websocket.accept, on the executor's thread. The 101's access-log line
// is made first: the loop reuses the job once it has written the 101.
func (w *bridgeJob) AcceptWebSocket(protocol []byte, headers *pybridge.Response,
	events pybridge.WebSocketEvents) (pybridge.WebSocketConn, error) {
	lj := w.loopJob
	for i := 0; i < headers.HeaderLen(); i++ {
		name, value := headers.Header(i)
		if err := lj.SetHeaderBytes(name, value); err != nil {
			return nil, err
		}
	}
	if p := w.pool; p.accessLog {
		e := &w.logEntry
		// An RFC 8441 accept over HTTP/2 is a 200, not a 101.
		status := 101
		if lj.Request.Version == http1.Version20 {
			status = 200
		}
		e.setResponse(w.remote, &lj.Request, nil, status, 0)
		if p.logFormat.timed {
			e.duration = time.Duration(time.Now().UnixNano() - lj.Arrived)
		}
		w.logLine = p.logFormat.append(w.logLine[:0], e)
	}
	remote, err := lj.AcceptWebSocket(asgiWebSocket{events}, protocol)
	if errors.Is(err, loop.ErrAborted) {
		return nil, pybridge.ErrWebSocketGone
	}
	if err != nil {
		return nil, err
	}
	if w.pool.accessLog {
		unix.Write(int(accessLogFD.Load()), w.logLine)
	}
	return asgiWebSocketConn{remote}, nil
}

// asgiWebSocket is the loop's handler of an ASGI app's WebSocket: each
// message goes to the executor, held untaken until the app receives it
// (the loop stops reading past --ws-max-queue).
type asgiWebSocket struct{ events pybridge.WebSocketEvents }

func (h asgiWebSocket) OnMessage(_ *loop.WebSocket, op ws.Opcode, payload []byte) bool {
	h.events.Message(op == ws.OpBinary, payload)
	return true
}

func (h asgiWebSocket) OnClose(_ *loop.WebSocket, code ws.CloseCode, reason []byte) {
	h.events.Closed(int(code), reason)
}

// asgiWebSocketConn is pybridge.WebSocketConn over the loop's Remote.
type asgiWebSocketConn struct{ remote *loop.WebSocketRemote }

// Post implements pybridge.WebSocketConn: a message queued without
// waiting, on the executor's thread or (driven) the loop thread.
func (c asgiWebSocketConn) Post(binary bool, payload []byte) (bool, error) {
	op := ws.OpText
	if binary {
		op = ws.OpBinary
	}
	return c.remote.Post(op, payload)
}

// SetWritten implements pybridge.WebSocketConn.
func (c asgiWebSocketConn) SetWritten(f func(closed bool)) { c.remote.SetOnWritten(f) }

func (c asgiWebSocketConn) Close(code int, reason string) {
	c.remote.Close(ws.CloseCode(code), reason)
}

func (c asgiWebSocketConn) Taken() { c.remote.Taken() }

// pythonServing names the environment the app imports from, for a
// message: the venv, the interpreter m0serve runs in (the wheel), or the
// one it embeds.
func pythonServing(cfg *Config) string {
	venv := cfg.Venv
	if venv == "" && !pybridge.Hosted() {
		venv = os.Getenv("VIRTUAL_ENV") // pybridge.Config.VirtualEnv's default
	}
	switch executable, prefix := pybridge.Embedded(); {
	case venv != "":
		return "the venv " + venv
	case pybridge.Hosted():
		return "the interpreter m0serve runs in"
	case executable != "":
		return executable + ", sys.prefix " + prefix
	default:
		return "the embedded Python"
	}
}
