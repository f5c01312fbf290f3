package server

import (
	"errors"

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
// still in the app has gone (the connection closed, or its input ended,
// as uvicorn takes it): a task awaiting receive learns of it now rather
// than at its next send. It runs on the loop thread with the loop job
// locked, so the job cannot complete and be handed out again meanwhile
// (the executor delivers such notes before it starts new jobs). The flag
// covers a job the executor has not started yet, whose ClientGone note
// would be ignored: the executor reads it as it starts the job.
func (p *wsgiPool) jobGone(owner any) {
	if w, ok := owner.(*wsgiJob); ok && p.executor != nil {
		w.gone.Store(true)
		p.executor.ClientGone(&w.job)
	}
}

// ClientGoneAtStart implements pybridge.GoneAtStart.
func (w *wsgiJob) ClientGoneAtStart() bool { return w.gone.Load() }
