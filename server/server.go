package server

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// nativeWorkers is how many goroutines run deferred native handlers: the
// slow handler sleeps in one, so this bounds its concurrency.
const nativeWorkers = 256

// Run serves cfg until SIGTERM or SIGINT has drained the loop. logf gets
// the start line and operational messages.
//
// The first SIGTERM or SIGINT starts a graceful shutdown with one budget,
// --graceful-timeout, for all of it: requests in flight finish, then the
// ASGI lifespan shutdown or the handler threads, then Python is
// finalised. What is still running at the deadline is cut off and logged,
// and Run returns without finalising Python. A second SIGTERM or SIGINT
// exits the process at once (os.Exit, Python not finalised) with status
// 128+signal: 130 for Ctrl-C, 143 for SIGTERM, what a shell reports for a
// process the signal killed. SIGHUP is logged and ignored.
func Run(cfg Config, logf func(format string, args ...any)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Every locked OS thread needs a P of its own to run Go code, and one
	// more keeps the rest of the runtime going: with taskset to one CPU Go
	// picks GOMAXPROCS=1, and a handoff then cost 37 µs per job against
	// 9.8 at 2.
	lockedThreads := 1
	if cfg.App != "" {
		// WSGI's handler threads, or ASGI's one event-loop thread (not yet
		// known which: one more P than needed is harmless).
		lockedThreads += max(1, cfg.Threads)
	}
	if runtime.GOMAXPROCS(0) < lockedThreads+1 {
		runtime.GOMAXPROCS(lockedThreads + 1)
	}

	// SIGHUP would end the process mid-request (its default action);
	// a single process has nothing to reload, so it is logged and
	// ignored. From here on, so that a HUP during the app's import is
	// ignored too.
	hangups := make(chan os.Signal, 1)
	signal.Notify(hangups, syscall.SIGHUP)
	defer signal.Stop(hangups)
	go func() {
		for range hangups {
			logf("m0serve: SIGHUP: ignored (reloading needs --workers)")
		}
	}()

	listenFD, bound, err := cfg.openListener()
	if err != nil {
		return err
	}
	defer unix.Close(listenFD)

	var (
		handler loop.Handler
		jobs    *loop.JobQueue
		py      *python
		jobGone func(any, loop.JobGone)
		onExit  func()
		// wsgi: handler threads wait on request bodies (ASGI tasks
		// do not), so the loop gathers small bodies and times large ones.
		wsgi bool
	)
	if cfg.App != "" {
		py, err = startPython(&cfg, bound, logf)
		if err != nil {
			return err
		}
		handler, jobs = deferAll, py.queue
		wsgi = py.executor == nil
		if cfg.Threads == 0 && py.executor == nil {
			inline := newInlineWSGI(py.pool, py.interp)
			handler, onExit = inline, inline.exit
		}
		if py.executor != nil {
			handler = asgiRequests{}
			jobGone = py.pool.jobGone
		}
	} else {
		native := natives[cfg.Native]
		handler = native.inline
		if native.deferred != nil {
			jobs = loop.NewJobQueue(4096)
			for i := 0; i < nativeWorkers; i++ {
				go func() {
					for j := jobs.Take(); j != nil; j = jobs.Take() {
						native.deferred(j)
					}
				}()
			}
			defer jobs.Close()
		}
	}

	var loopResponses func(netip.AddrPort, *http1.Request, int, int)
	if cfg.AccessLog {
		loopResponses = (&loopAccessLog{}).log
	}
	server, headers, _ := cfg.responseFields() // checked by Validate
	url := "http://" + net.JoinHostPort(bound.Addr().String(), strconv.Itoa(int(bound.Port())))
	l, err := loop.New(loop.Config{
		NewBackend: func() (loop.Backend, error) {
			return newBackend(cfg.Backend, logf)
		},
		ListenFD:         listenFD,
		Handler:          cfg.Worker.handler(handler),
		Jobs:             jobs,
		MaxConnections:   cfg.MaxConnections,
		HeaderTimeout:    cfg.HeaderTimeout,
		KeepAliveTimeout: cfg.KeepAliveTimeout,
		BodyTimeout:      cfg.BodyTimeout,
		MaxBodySize:      cfg.MaxBodySize,
		Limits:           http1.Limits{MaxHeadBytes: cfg.MaxHeadSize, MaxFields: cfg.MaxFields},
		Server:           server,
		NoDate:           cfg.NoDateHeader,
		Headers:          headers,
		Logf:             logf,
		OnJobGone:        jobGone,
		OnLoopResponse:   loopResponses,
		WebSocket:        cfg.webSocket(),
		OnExit:           onExit,
		OnStart: func(name string) {
			logf("m0serve: %s: serving on %s (%s)", describeApp(&cfg, py), url, name)
			cfg.Worker.started()
		},
		Heartbeat: cfg.Worker.heartbeatStamp(),

		MaxConnectionsPerIP: cfg.MaxConnectionsPerIP,
		SendTimeout:         cfg.SendTimeout,
		BufferBodies:        wsgi,
		BodyMinRate:         bodyMinRate(wsgi, cfg.BodyMinRate),
	})
	if err != nil {
		if py != nil {
			py.stop(newStopper(nil, cfg.GracefulTimeout, logf).begin(), logf)
		}
		return err
	}

	cfg.Worker.attach(l, &cfg, logf)

	stop := newStopper(l, cfg.GracefulTimeout, logf)
	signal.Notify(stop.signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop.signals)
	defer stop.runReturned()
	go stop.run()

	runErr := l.Run()
	stop.loopEnded()
	if py != nil {
		if err := py.stop(stop, logf); err != nil && runErr == nil {
			return err
		}
	}
	if runErr != nil {
		return fmt.Errorf("loop: %w", runErr)
	}
	logf("m0serve: stopped")
	return nil
}
