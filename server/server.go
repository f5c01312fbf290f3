package server

import (
	"fmt"
	"net"
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
func Run(cfg Config, logf func(format string, args ...any)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Every locked OS thread needs a P of its own to run Go code, and one
	// more keeps the rest of the runtime going: with taskset to one CPU Go
	// picks GOMAXPROCS=1, and a handoff then cost 37 µs per job against
	// 9.8 at 2 (DESIGN.md, "Go runtime").
	lockedThreads := 1
	if cfg.App != "" {
		// WSGI's handler threads, or ASGI's one event-loop thread (not yet
		// known which: one more P than needed is harmless).
		lockedThreads += max(1, cfg.Threads)
	}
	if runtime.GOMAXPROCS(0) < lockedThreads+1 {
		runtime.GOMAXPROCS(lockedThreads + 1)
	}

	listenFD, bound, err := listen(cfg.Host, cfg.Port, cfg.Backlog)
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
			jobGone = py.pool.jobGone
			logf("m0serve: ASGI app %s on the %s event loop", cfg.App, py.executor.LoopName())
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

	url := "http://" + net.JoinHostPort(bound.Addr().String(), strconv.Itoa(int(bound.Port())))
	l, err := loop.New(loop.Config{
		NewBackend: func() (loop.Backend, error) {
			return newBackend(cfg.Backend, logf)
		},
		ListenFD:         listenFD,
		Handler:          handler,
		Jobs:             jobs,
		MaxConnections:   cfg.MaxConnections,
		HeaderTimeout:    cfg.HeaderTimeout,
		KeepAliveTimeout: cfg.KeepAliveTimeout,
		BodyTimeout:      cfg.BodyTimeout,
		MaxBodySize:      cfg.MaxBodySize,
		Limits:           http1.Limits{MaxHeadBytes: cfg.MaxHeadSize, MaxFields: cfg.MaxFields},
		Server:           []byte("m0serve"),
		Logf:             logf,
		OnJobGone:        jobGone,
		OnExit:           onExit,
		OnStart: func(name string) {
			logf("m0serve: serving on %s (%s)", url, name)
		},

		MaxConnectionsPerIP: cfg.MaxConnectionsPerIP,
		SendTimeout:         cfg.SendTimeout,
		BufferBodies:        wsgi,
		BodyMinRate:         bodyMinRate(wsgi, cfg.BodyMinRate),
	})
	if err != nil {
		if py != nil {
			py.stop(cfg.GracefulTimeout, logf)
		}
		return err
	}

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)
	go func() {
		sig := <-signals
		logf("m0serve: %v: draining (up to %v)", sig, cfg.GracefulTimeout)
		l.Shutdown(cfg.GracefulTimeout)
		sig = <-signals
		logf("m0serve: %v again: closing every connection now", sig)
		l.Shutdown(0)
	}()

	runErr := l.Run()
	if py != nil {
		if err := py.stop(cfg.GracefulTimeout, logf); err != nil && runErr == nil {
			return err
		}
	}
	if runErr != nil {
		return fmt.Errorf("loop: %w", runErr)
	}
	logf("m0serve: stopped")
	return nil
}
