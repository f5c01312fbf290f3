package server

import (
	"bytes"
	"errors"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
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

// startASGI starts the executor on the pool and returns once lifespan
// startup is over. On failure everything started is stopped and Python
// is finalised.
func (py *python) startASGI(cfg *Config, app *pybridge.App, listener *Listener) error {
	py.pool.asgi = true
	ex, err := py.interp.StartASGI(app, pybridge.ASGIOptions{
		Loop:       asgiLoops[cfg.Loop],
		Lifespan:   asgiLifespans[cfg.Lifespan],
		ServerName: listener.serverName(),
		ServerPort: listener.serverPort(),
	}, py.pool, py.pool)
	if err != nil {
		py.queue.Close()
		py.interp.Close()
		var startup *pybridge.StartupError
		if errors.As(err, &startup) {
			return &LifespanError{startup}
		}
		return &AppLoadError{err}
	}
	py.executor = ex
	py.pool.executor = ex
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
func (p *wsgiPool) jobGone(owner any, how loop.JobGone) {
	w, ok := owner.(*wsgiJob)
	if !ok || p.executor == nil {
		return
	}
	if how == loop.InputEnded {
		w.inputEnded.Store(true)
		p.executor.ClientInputEnded(&w.job)
		return
	}
	w.gone.Store(true)
	p.executor.ClientGone(&w.job)
}

// ClientGoneAtStart implements pybridge.GoneAtStart.
func (w *wsgiJob) ClientGoneAtStart() (closed, inputEnded bool) {
	return w.gone.Load(), w.inputEnded.Load()
}

// asgiRequests hands every request to the ASGI executor but a WebSocket
// handshake, which it answers itself: the bridge speaks no WebSocket
// yet, and passing the handshake on as a plain HTTP request (what the
// app would see) leaves the app to answer a request it cannot tell from
// an upgrade. 501 Not Implemented is the status for a server lacking
// what the request needs (RFC 9110 §15.6.2); 426 would tell the client
// to upgrade and 400 would blame it. The connection stays usable: no
// upgrade happened.
type asgiRequests struct {
	logf   func(string, ...any)
	warned bool // the first refusal was logged (the loop thread's)
}

// webSocketRefusal is the 501's body.
var webSocketRefusal = []byte("WebSockets are not supported yet\n")

// ServeInline implements loop.Handler.
func (h *asgiRequests) ServeInline(req *loop.Request, w *loop.ResponseWriter) {
	if !req.Upgrade || !upgradesToWebSocket(req.Header.Known(http1.HeaderUpgrade)) {
		w.Defer()
		return
	}
	if !h.warned {
		h.warned = true
		h.logf("m0serve: WebSocket handshake for %q answered 501: m0serve does not serve WebSockets yet (said once)",
			req.Bytes(req.Path))
	}
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.Respond(501, webSocketRefusal)
}

// upgradesToWebSocket reports "websocket" among the protocols of an
// Upgrade value (RFC 9110 §7.8: a comma-separated list, case-insensitive).
func upgradesToWebSocket(value []byte) bool {
	for len(value) > 0 {
		end := bytes.IndexByte(value, ',')
		if end < 0 {
			end = len(value)
		}
		protocol := bytes.TrimSpace(value[:end])
		if slash := bytes.IndexByte(protocol, '/'); slash >= 0 {
			protocol = protocol[:slash] // websocket/13
		}
		if http1.EqualFold(protocol, "websocket") {
			return true
		}
		value = value[min(end+1, len(value)):]
	}
	return false
}
