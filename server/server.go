package server

import (
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/internal/metrics"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
	"github.com/prometheus/client_golang/prometheus"
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
	// picks GOMAXPROCS=1, and every handoff then waits for the one P
	// (bench/README.md, Figures behind the comments).
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
	// a single process reloads its TLS certificate on it (tls.go), and
	// has nothing else to reload, so otherwise it is logged and ignored.
	// From here on, so that a HUP during the app's import is ignored too.
	hangups := make(chan os.Signal, 1)
	signal.Notify(hangups, syscall.SIGHUP)
	defer signal.Stop(hangups)
	go func() {
		for range hangups {
			if cfg.tls != nil && cfg.Worker == nil {
				cfg.reloadTLS(logf)
				continue
			}
			logf("m0serve: warning: SIGHUP: ignored (reloading needs --workers)")
		}
	}()

	held := holdStartSignals(logf)
	defer held.release()

	listener, err := cfg.openListener()
	if err != nil {
		return err
	}
	defer listener.Close()

	// The metrics' counters: a worker's in its heartbeat file, for the
	// master; a single process's in its own memory, served from here.
	// --metrics and --health-path read them on the serving port too: a
	// worker's own there (the master sums them at --metrics-address).
	var stats *loop.Stats
	var procMetrics *processMetrics
	if cfg.MetricsAddress != "" || cfg.Metrics || cfg.HealthPath != "" {
		var registry *prometheus.Registry
		if cfg.Worker != nil {
			procMetrics, registry = newProcessMetrics(&cfg, cfg.Worker.stats, cfg.Worker.appStats)
		} else {
			procMetrics, registry = newProcessMetrics(&cfg, nil, nil)
			if cfg.MetricsAddress != "" {
				stopMetrics, err := metrics.Serve(cfg.MetricsAddress, registry, logf)
				if err != nil {
					return err
				}
				defer stopMetrics()
			}
		}
		stats, cfg.appStats = procMetrics.stats, procMetrics.app
		cfg.registry = registry
	}

	// Access-log lines made on the loop thread, written once per pass.
	lines := &loopLines{}
	var static *staticFiles
	if len(cfg.StaticMounts) > 0 {
		if static, err = newStaticFiles(cfg.StaticMounts, cfg.StaticExpires, cfg.StaticDotfiles); err != nil {
			return err
		}
		defer static.close()
		if err := static.setExtras(&cfg); err != nil {
			return err
		}
	}

	var (
		handler loop.Handler
		jobs    *loop.JobQueue
		py      *python
		jobGone func(any, loop.JobGone)
		// jobWritten: the ASGI executor's posted pieces (Job.Post).
		jobWritten func(any)
		// jobReadable: the ASGI executor's pending body reads (Job.TryRead).
		jobReadable func(any)
		onExit      func()
		// passEnded: the inline policy's (--wsgi-inline auto).
		passEnded func()
		// stepper: the ASGI event loop, run by the loop thread.
		stepper *pybridge.ASGIExecutor
		// wsgi: handler threads wait on request bodies (ASGI tasks
		// do not), so the loop gathers small bodies and times large ones.
		wsgi bool
		// rescueAccepts: the loop thread runs requests itself
		// (handoff_rescue.go).
		rescueAccepts *inlinePolicy
	)
	if cfg.realtime, err = openRealtime(&cfg); err != nil {
		return err
	}
	if cfg.App != "" {
		py, err = startPython(&cfg, &listener, logf)
		if err != nil {
			return err
		}
		handler, jobs = deferAll, py.queue
		wsgi = py.executor == nil
		if wsgi && cfg.Realtime {
			handler = realtimeRequests
		}
		if py.executor == nil && (cfg.Threads == 0 || inlinesWSGI(&cfg)) {
			inline := newInlineWSGI(py.pool, py.interp)
			inline.lines = lines
			handler, onExit = inline, inline.exit
			if cfg.Threads > 0 {
				policy := &inlinePolicy{logf: logf}
				inline.policy, py.pool.inline = policy, policy
				passEnded = policy.passEnded
				if stamp := cfg.Worker.heartbeatStamp(); stamp != nil {
					stop := make(chan struct{})
					defer close(stop)
					go policy.keepHeartbeat(stamp, stop)
				}
				rescueAccepts = policy
			}
		}
		if py.executor != nil {
			handler = asgiRequests{}
			jobGone, jobWritten, jobReadable = py.pool.jobGone, py.pool.jobWritten, py.pool.jobReadable
			if py.executor.Driven() {
				stepper = py.executor
				onExit = py.executor.LeaveLoop
			}
		}
		if py.mounts != nil {
			handler = mountRouter{table: py.mounts, next: handler, wsgi: py.wsgiQueue}
			if cfg.AccessLog {
				py.mounts.logAccess(cfg.accessFormat, cfg.proxyTrust)
			}
		}
	} else {
		native := natives[cfg.Native]
		if native.setup != nil {
			native.setup(logf)
		}
		handler = native.inline
		if cfg.AccessLog {
			handler = &nativeAccessLog{lines: lines, next: handler, format: cfg.accessFormat, proxy: cfg.proxyTrust}
		}
		if native.deferred != nil {
			jobs = loop.NewJobQueue(jobQueueSize)
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

	if static != nil {
		static.next, handler = handler, static
		if cfg.AccessLog {
			static.logFormat, static.proxy = cfg.accessFormat, cfg.proxyTrust
		}
	}
	server, headers, _ := cfg.responseFields() // checked by Validate
	// --request-timeout recycles the worker; without a master there is
	// nobody to replace it (package cli refuses the flag there).
	var requestTimeout time.Duration
	onRequestTimeout := cfg.Worker.requestTimeout(&cfg)
	if onRequestTimeout != nil {
		requestTimeout = cfg.RequestTimeout
	}

	var loopResponses func(netip.AddrPort, *http1.Request, int, int)
	passEnd := passEnded
	if cfg.AccessLog {
		loopResponses = (&loopAccessLog{lines: lines, format: cfg.accessFormat, proxy: cfg.proxyTrust}).log
		passEnd = lines.flush
		if passEnded != nil {
			passEnd = func() {
				passEnded()
				lines.flush()
			}
		}
	}
	// The handoff (handoff.go) weighs WSGI's handler threads; with
	// --threads 0 the app runs on the I/O thread, which cannot pass on
	// while it is in the app, and the worker stays off the board (-1).
	// ASGI tasks are not bounded (0): never full.
	handoffCapacity := 0
	if wsgi {
		handoffCapacity = cfg.Threads
		if cfg.Threads == 0 {
			handoffCapacity = -1
		}
	}
	handler = cfg.Worker.handler(handler)
	if answers := newServerAnswers(&cfg, handler, stats, cfg.registry); answers != nil {
		defer answers.close()
		handler = answers
	}
	url := cfg.ListenerURL(&listener)
	l, err := loop.New(loop.Config{
		NewBackend: func() (loop.Backend, error) {
			return newBackend(cfg.Backend, logf)
		},
		ListenFD:         listener.FD,
		Handler:          handler,
		Jobs:             jobs,
		MaxConnections:   cfg.MaxConnections,
		LimitConcurrency: cfg.LimitConcurrency,
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
		OnJobWritten:     jobWritten,
		OnJobReadable:    jobReadable,
		OnLoopResponse:   loopResponses,
		WebSocket:        cfg.webSocket(),
		OnPassEnd:        passEnd,
		Stepper:          loopStepper(stepper),
		Realtime:         cfg.realtime.loopConfig(),
		OnExit: func() {
			lines.flush()
			if onExit != nil {
				onExit()
			}
		},
		OnStart: func(name string) {
			if procMetrics != nil {
				procMetrics.backend.Store(&name)
			}
			// A person reads the start line: the backend's features are
			// an engineer's, at debug.
			backend := metrics.BackendLabels(name)
			if backend[1] != "" {
				logf("m0serve: debug: %s features: %s", backend[0], backend[1])
			}
			quit := " (Press CTRL+C to quit)"
			if cfg.Worker != nil {
				quit = "" // the master's line says it
			}
			logf("m0serve: %s: serving on %s (%s)%s", describeApp(&cfg, py), url, backend[0], quit)
			// WSGI's handler threads bound what the app serves at once
			// (--threads 0: the I/O thread, one); ASGI tasks and native
			// handlers are not counted.
			capacity := 0
			if wsgi {
				capacity = max(1, cfg.Threads)
			}
			cfg.Worker.started(name, capacity, handoffCapacity)
		},
		Heartbeat: cfg.Worker.heartbeatStamp(),

		TLS:                  cfg.tls,
		HTTP2:                cfg.http2(),
		MaxConnectionsPerIP:  cfg.MaxConnectionsPerIP,
		SendTimeout:          cfg.SendTimeout,
		BufferBodies:         wsgi,
		BodyMinRate:          bodyMinRate(wsgi, cfg.BodyMinRate),
		ClientWaitLimit:      clientWaitLimit(&cfg, py),
		RequestTimeout:       requestTimeout,
		OnRequestTimeout:     onRequestTimeout,
		Stats:                stats,
		MaxKeepAliveRequests: cfg.MaxKeepAliveRequests,
		PassOn:               cfg.Worker.passOn(max(0, handoffCapacity)),
	})
	if err != nil {
		if py != nil {
			py.stop(newStopper(nil, cfg.GracefulTimeout, logf).begin(), logf)
		}
		return err
	}

	if stepper != nil {
		stepper.SetKick(l.Kick)
	}
	cfg.realtime.run(l, logf)
	defer cfg.realtime.listenPostgres(&cfg, logf)()
	if stop := cfg.Worker.rescue(rescueAccepts, listener.FD, l); stop != nil {
		defer stop()
	}
	cfg.Worker.attach(l, &cfg, logf)
	if err := cfg.Worker.watchStacks(&cfg, py); err != nil {
		logf("m0serve: warning: --request-timeout will not show Python's stacks: %v", err)
	}

	stop := newStopper(l, cfg.GracefulTimeout, logf)
	if cfg.Worker == nil && !listener.Inherited {
		// In a worker the socket is the master's, shared with the
		// replacement and the other workers, and an inherited one (--fd,
		// systemd) outlives this process: then it only stops accepting.
		stop.listenFD = listener.FD
	}
	stop.stoppedAccepting = cfg.Worker.stoppedAccepting
	stop.masterSays = cfg.Worker.masterSays()
	held.handOver(stop)
	defer stop.runReturned()
	go stop.run()

	runErr := l.Run()
	stop.loopEnded()
	select {
	case <-stop.forced:
		// The second signal's Shutdown(0) ended the loop: exit with its
		// status here, or returning would race stop.run's exit with 0.
		stop.exitNow()
	default:
	}
	if py != nil && cfg.Worker.stuckInApp() {
		// The stuck request's thread would hold Python's stop (and burn
		// its CPU, if it spins) for the whole graceful budget, for
		// nothing: it cannot be stopped, and the process's exit is what
		// ends it.
		logf("m0serve: warning: drained; a request is stuck in the app (--request-timeout): exiting without stopping Python")
		py = nil
	}
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

// loopStepper is ex as the loop's Stepper, or none: a nil *ASGIExecutor
// must not become a non-nil interface.
func loopStepper(ex *pybridge.ASGIExecutor) loop.Stepper {
	if ex == nil {
		return nil
	}
	return ex
}
