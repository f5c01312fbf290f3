package pybridge

/*
#include "asgi.h"
*/
import "C"

import "time"

// Loop chooses the ASGI executor's event loop.
type Loop uint8

const (
	LoopAuto    Loop = iota // uvloop when it imports, else asyncio
	LoopAsyncio             // the standard library's loop
	LoopUvloop              // uvloop, or StartASGI fails
)

func (l Loop) String() string {
	switch l {
	case LoopAsyncio:
		return "asyncio"
	case LoopUvloop:
		return "uvloop"
	}
	return "auto"
}

// Lifespan chooses whether the ASGI lifespan protocol runs.
type Lifespan uint8

const (
	// LifespanAuto runs it and tolerates an app that raises on the
	// lifespan scope (as uvicorn's "auto" does); a startup.failed message
	// still fails the start.
	LifespanAuto Lifespan = iota
	// LifespanOn runs it; the app raising in it fails the start.
	LifespanOn
	// LifespanOff sends no lifespan scope.
	LifespanOff
)

func (l Lifespan) String() string {
	switch l {
	case LifespanOn:
		return "on"
	case LifespanOff:
		return "off"
	}
	return "auto"
}

// ASGIOptions configure an ASGI executor.
type ASGIOptions struct {
	Loop     Loop
	Lifespan Lifespan
	// ServerName and ServerPort fill the scope's server pair; URLScheme
	// its scheme ("http" when empty). The root path is the app's
	// (AppSpec.RootPath).
	ServerName string
	ServerPort int
	URLScheme  string
	// MaxInFlight bounds the requests the executor runs at once; past it
	// the executor takes no more jobs from its source (the loop feels the
	// back-pressure). 0 means DefaultMaxInFlight; at most 65536, the
	// process's slot table, which all executors share (a job finding no
	// free slot gets a 503).
	MaxInFlight int
	// Batch is how many jobs the executor takes from its source at a
	// time; 0 means 64.
	Batch int
	// CancelTimeout is how long Stop waits for cancelled tasks (their
	// finally clauses) before lifespan shutdown; 0 means 5 s.
	CancelTimeout time.Duration
	// Driven runs the event loop on the caller's loop thread instead of
	// a thread of its own: after startup, that thread calls Step once per
	// pass and LeaveLoop as it ends (asgi_driven.go). The loop is
	// asyncio's whatever Loop says (LoopUvloop is refused).
	Driven bool
	// Mounted are ASGI apps the executor serves beside the first (each
	// under its own AppSpec.RootPath, each with its own lifespan, run in
	// order): a job runs the one its Job.App names. At most 63.
	Mounted []*App
}

// DefaultMaxInFlight is ASGIOptions.MaxInFlight's default.
const DefaultMaxInFlight = 4096

// appTable is the executor's apps for m0_asgi_new, the first app's and
// then ASGIOptions.Mounted, each told its place: Go memory holding C
// pointers only, which C copies.
func (ex *ASGIExecutor) appTable() []*C.m0_app {
	apps := make([]*C.m0_app, 0, 1+len(ex.opt.Mounted))
	ex.app.asgiIndex = 0
	apps = append(apps, ex.app.c)
	for i, a := range ex.opt.Mounted {
		a.asgiIndex = i + 1
		apps = append(apps, a.c)
	}
	return apps
}

// appIndex is the place of the app j names in the executor's table: the
// first app's for a job naming none, or one the executor does not serve.
func (ex *ASGIExecutor) appIndex(j *Job) int {
	a := j.App
	if a == nil || a == ex.app || a.asgiIndex < 1 || a.asgiIndex > len(ex.opt.Mounted) || ex.opt.Mounted[a.asgiIndex-1] != a {
		return 0
	}
	return a.asgiIndex
}
