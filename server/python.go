package server

import (
	"fmt"
	"github.com/m0serve/m0serve/grant"
	"os"
	"strings"
	"time"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
)

// DefaultThreads is --threads' default: handler threads calling the app.
// See cli's --help for the measurement behind it.
const DefaultThreads = 1

// DefaultWSGIInline is --wsgi-inline's default. See cli's --help
// for the measurement behind it.
const DefaultWSGIInline = "auto"

// DefaultMaxClientWaits is --max-client-waits' default: spare handler
// threads standing in for threads blocked on their clients. Each is a
// parked OS thread with a Python thread state (its stack touched only as
// deep as the app goes) and ties up nothing else, while each slow client
// it absorbs would otherwise stall every request behind it for up to
// --send-timeout; 64 covers as many slow readers or slow bodies at once
// per process, past which slow clients queue as before until the send
// timeout and --body-min-rate cut them.
const DefaultMaxClientWaits = 64

// maxClientWaits bounds --max-client-waits: with --threads' bound, well
// inside the bridge's 1024 threads.
const maxClientWaits = 512

// maxThreads bounds --threads (the bridge's own limit is higher; more
// threads than this only contend for the GIL).
const maxThreads = 256

// batchJobs is how many jobs a lone handler thread takes at a time. The
// wake's cost (bench/README.md, Figures behind the comments) is spread by
// the thread taking the next job without parking while jobs wait, whatever
// it takes at a time; so several threads take one job at a time: a job in
// one thread's batch could not run on an idle thread, and would wait behind a
// slow request.
const batchJobs = 16

// jobQueueSize bounds requests waiting for a handler thread; beyond it the
// loop stops reading the connections whose requests wait.
const jobQueueSize = 4096

// AppLoadError is a Python application that could not be started: the
// interpreter or the import failed. The command line prints it (the
// Python traceback, no Go stack) and exits with status 2.
type AppLoadError struct {
	Err error
}

func (e *AppLoadError) Error() string { return e.Err.Error() }
func (e *AppLoadError) Unwrap() error { return e.Err }

// LifespanError is an ASGI app whose lifespan startup failed: the command
// line prints the app's message and exits with status 3 (uvicorn's
// status for the same failure).
type LifespanError struct {
	Err *pybridge.StartupError
}

func (e *LifespanError) Error() string { return e.Err.Error() }
func (e *LifespanError) Unwrap() error { return e.Err }

// python is the embedded interpreter serving one app, WSGI on handler
// threads or ASGI on one event-loop thread. Both take their jobs through
// the same pool, which adapts loop jobs to bridge jobs and back.
type python struct {
	interp   *pybridge.Interpreter
	queue    *loop.JobQueue
	pool     *bridgePool
	handlers *pybridge.Handlers     // WSGI
	executor *pybridge.ASGIExecutor // ASGI
	// With an ASGI --mount beside WSGI ones, the WSGI mounts' queue,
	// pool and handler threads (the executor has the ones above).
	wsgiQueue    *loop.JobQueue
	wsgiPool     *bridgePool
	wsgiHandlers *pybridge.Handlers
	// mounts: --mount's table (nil: one app).
	mounts mountTable
}

// startPython starts the interpreter, imports the app and starts the
// handler threads, or the ASGI executor and its lifespan startup: the
// caller accepts connections only after it returns. SERVER_NAME and
// SERVER_PORT (the scope's server) come from the listener.
func startPython(cfg *Config, listener *Listener, logf func(string, ...any)) (*python, error) {
	pybridge.SetLog(logf)
	interp, err := pybridge.Start(pybridge.Config{AppDir: cfg.AppDir, VirtualEnv: cfg.Venv})
	if err != nil {
		return nil, &AppLoadError{err}
	}
	if err := interp.ProvidePublisher(cfg.realtime.publisher()); err != nil {
		interp.Close()
		return nil, err
	}
	if err := interp.ProvideModule("grant", grant.Source); err != nil {
		interp.Close()
		return nil, err
	}
	if cfg.LogConfig != "" {
		warning, err := interp.ConfigureLogging(cfg.LogConfig)
		if err != nil {
			interp.Close()
			return nil, &ConfigError{Flag: "log-config", Reason: err.Error()}
		}
		if warning != "" {
			logf("m0serve: warning: --log-config %s", warning)
		}
	}
	spec := pybridge.AppSpec{
		Target:     cfg.App,
		Factory:    cfg.Factory,
		RootPath:   cfg.RootPath,
		ServerName: listener.serverName(),
		URLScheme:  cfg.urlScheme(),
		ServerPort: listener.serverPort(),
		// CGI's name/version, as gunicorn's "gunicorn/23.0.0".
		ServerSoftware: "m0serve/" + cfg.Version,
		// --threads 0 calls the app on the loop thread and on the one
		// handler thread (requests with a body).
		// Spare threads call it while a handler thread waits on its
		// client, so it may be called again before a call has returned.
		MultiThread: cfg.Threads != 1 || cfg.MaxClientWaits > 0,
	}
	var mounts mountTable
	if len(cfg.Mounts) > 0 {
		if mounts, err = loadMounts(cfg, interp, spec); err != nil {
			interp.Close()
			if _, ok := err.(*ConfigError); ok {
				return nil, err
			}
			return nil, &AppLoadError{err}
		}
		cfg.App = mounts.describe()
	}
	app, err := loadFirst(interp, spec, mounts)
	if err != nil {
		interp.Close()
		return nil, &AppLoadError{err}
	}
	if found := app.Spec().Target; found != cfg.App && mounts == nil {
		// A bare module: say which of its attributes is served.
		cfg.App = found
		logf("m0serve: serving %s", found)
	}
	py := &python{interp: interp, queue: loop.NewJobQueue(jobQueueSize)}
	py.pool = py.newPool(cfg, py.queue, app, logf)
	py.pool.mounts, py.mounts = mounts, mounts
	warnIdleFlags(cfg, servesASGI(cfg, app), logf)
	if servesASGI(cfg, app) {
		if mounts.wsgiApps() {
			// WSGI mounts beside the ASGI one: handler threads of their
			// own, on a queue of their own (mountRouter).
			py.wsgiQueue = loop.NewJobQueue(jobQueueSize)
			py.wsgiPool = py.newPool(cfg, py.wsgiQueue, mounts[len(mounts)-1].app, logf)
			py.wsgiPool.mounts = mounts
			if py.wsgiHandlers, err = py.startHandlers(cfg, py.wsgiPool); err != nil {
				py.queue.Close()
				interp.Close()
				return nil, err
			}
		}
		return py, py.startASGI(cfg, app, listener)
	}
	if py.handlers, err = py.startHandlers(cfg, py.pool); err != nil {
		interp.Close()
		return nil, err
	}
	return py, nil
}

// newPool is a bridge pool over queue, with the configuration's
// instruments.
func (py *python) newPool(cfg *Config, queue *loop.JobQueue, app *pybridge.App, logf func(string, ...any)) *bridgePool {
	pool := newBridgePool(queue, app, cfg.AccessLog, logf)
	pool.inApp = cfg.Worker.inApp()
	pool.inFlight = cfg.Worker.requests()
	pool.stats = cfg.appStats
	pool.proxy, pool.logFormat = cfg.proxyTrust, cfg.accessFormat
	pool.realtime = cfg.Realtime
	return pool
}

// startHandlers starts the WSGI handler threads taking from pool. On
// failure its queue is closed and the threads started are waited for.
func (py *python) startHandlers(cfg *Config, pool *bridgePool) (*pybridge.Handlers, error) {
	threads := max(1, cfg.Threads) // --threads 0 keeps one for requests with a body
	batch := batchJobs
	if threads > 1 {
		batch = 1
	}
	py.interp.SetMaxClientWaits(cfg.MaxClientWaits)
	handlers, err := py.interp.StartHandlers(threads, batch, pool, pool)
	if err != nil {
		pool.queue.Close()
		if handlers != nil {
			handlers.Wait()
		}
		return nil, fmt.Errorf("starting %d handler threads: %w", threads, err)
	}
	if cfg.MaxClientWaits > 0 {
		pool.handlers = handlers
	}
	return handlers, nil
}

// stop runs after the loop has ended: the handler threads finish what is
// queued (their connections are gone, so reads and writes fail fast), or
// the ASGI executor cancels what still runs and runs lifespan shutdown;
// then Python is finalised. All of it within what is left of the
// shutdown's one budget: past the deadline whatever still runs in Python
// is left behind and Python is not finalised under it. A second signal
// meanwhile exits at once.
func (py *python) stop(s *stopper, logf func(string, ...any)) error {
	py.queue.Close()
	py.mounts.close()
	if py.wsgiQueue != nil {
		py.wsgiQueue.Close()
	}
	ended := make(chan struct{})
	var closeErr error
	go func() {
		if py.wsgiHandlers != nil {
			py.wsgiHandlers.Wait()
		}
		if py.executor != nil {
			if err := py.executor.Stop(); err != nil {
				logf("m0serve: error: %v", err)
			}
		} else {
			py.handlers.Wait()
		}
		if err := py.interp.Close(); err != nil {
			closeErr = fmt.Errorf("finalizing Python: %w", err)
		}
		close(ended)
	}()
	budget := time.NewTimer(time.Until(s.deadline))
	defer budget.Stop()
	select {
	case <-ended:
		return closeErr
	case <-s.forced:
		s.exitNow()
	case <-budget.C:
		logf("m0serve: warning: Python still running at the shutdown deadline (%v after the signal): exiting without finalizing it", s.grace)
	}
	return nil
}

// describeApp is the start line's account of what serves: the app, its
// interface, the threads or event loop it runs on, and the virtualenv.
func describeApp(cfg *Config, py *python) string {
	if py == nil {
		return "native handler " + cfg.Native
	}
	var b strings.Builder
	if py.executor != nil {
		fmt.Fprintf(&b, "ASGI app %s on the %s event loop", cfg.App, py.executor.LoopName())
		if py.executor.Driven() {
			b.WriteString(" on the I/O thread")
		}
		if py.wsgiHandlers != nil {
			fmt.Fprintf(&b, ", its WSGI mounts on %s", plural(max(1, cfg.Threads), "handler thread"))
		}
	} else {
		switch {
		case cfg.Threads == 0:
			fmt.Fprintf(&b, "WSGI app %s on the I/O thread (1 handler thread for requests with a body)", cfg.App)
		case inlinesWSGI(cfg):
			fmt.Fprintf(&b, "WSGI app %s on 1 handler thread, quick requests on the I/O thread while it is idle", cfg.App)
		default:
			fmt.Fprintf(&b, "WSGI app %s on %s", cfg.App, plural(cfg.Threads, "handler thread"))
		}
	}
	venv := cfg.Venv
	if venv == "" && !pybridge.Hosted() {
		venv = os.Getenv("VIRTUAL_ENV") // pybridge.Config.VirtualEnv's default
	}
	if venv != "" {
		fmt.Fprintf(&b, ", venv %s", venv)
	}
	fmt.Fprintf(&b, ", Python %s", pybridge.Version())
	return b.String()
}

// inlinesWSGI reports whether the loop thread runs some WSGI requests
// itself under --wsgi-inline auto: with one handler thread only, where
// the app's requests run one at a time anyway, so one that turns slow
// holds up the other clients' requests whichever thread it is on. More
// threads say the app waits (a database, the network), and a waiting
// request must not hold the I/O thread. Not with --request-timeout
// either: the loop must be free to time a request out. In a worker
// among siblings a loop inside the app cannot pass on what its socket
// queues meanwhile: the handoff's rescue does (handoff_rescue.go).
func inlinesWSGI(cfg *Config) bool {
	return cfg.Threads == 1 && cfg.WSGIInline == "auto" && cfg.RequestTimeout == 0 && len(cfg.Mounts) == 0 && !cfg.Realtime
}

// loadFirst is the app the bridge starts from: the one named, or with
// --mount the first ASGI mount's (the executor serves them), else the shortest
// prefix's (each job then takes its own).
func loadFirst(interp *pybridge.Interpreter, spec pybridge.AppSpec, mounts mountTable) (*pybridge.App, error) {
	if mounts != nil {
		if apps := mounts.asgiApps(); apps != nil {
			return apps[0], nil
		}
		return mounts.first(), nil
	}
	return interp.LoadApp(spec)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// bodyMinRate is --body-min-rate where it applies: to WSGI, whose
// handler threads wait on the body (an ASGI task waiting costs no thread).
func bodyMinRate(wsgi bool, rate int64) int64 {
	if !wsgi {
		return 0
	}
	return rate
}

// wsgiFlags and asgiFlags act on one interface's apps only.
var (
	wsgiFlags = []string{"threads", "wsgi-inline", "max-client-waits", "body-min-rate"}
	asgiFlags = []string{"loop", "lifespan", "asgi-thread"}
)

// idleFlags are the flags given that do nothing for an app of this
// interface, as "--loop and --lifespan".
func idleFlags(given map[string]bool, asgi bool) string {
	other := asgiFlags
	if asgi {
		other = wsgiFlags
	}
	var idle []string
	for _, name := range other {
		if given[name] {
			idle = append(idle, "--"+name)
		}
	}
	switch len(idle) {
	case 0:
		return ""
	case 1:
		return idle[0]
	}
	return strings.Join(idle[:len(idle)-1], ", ") + " and " + idle[len(idle)-1]
}

// warnIdleFlags says once, at start, that flags given do nothing for
// this app: a user who set --threads 8 for a FastAPI app would otherwise
// believe it took. Under a master, worker 0 says it for all.
func warnIdleFlags(cfg *Config, asgi bool, logf func(string, ...any)) {
	if cfg.Worker != nil && cfg.Worker.Slot != 0 {
		return
	}
	idle := idleFlags(cfg.Given, asgi)
	switch {
	case idle == "":
	case asgi:
		logf("m0serve: warning: %s: nothing to do for an ASGI app (WSGI's handler threads); its requests run on the event loop", idle)
	default:
		logf("m0serve: warning: %s: nothing to do for a WSGI app (ASGI's event loop); its requests run on handler threads", idle)
	}
}
