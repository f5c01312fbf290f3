// Package cli is m0serve's command line: it parses flags and M0_*
// environment variables (a flag wins over its variable) and hands the
// configuration to package server, or to package supervisor for
// --workers. Both entries call Main: the binary that embeds CPython
// (cmd/m0serve) and the extension module a user's own interpreter imports.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/m0serve/m0serve/pybridge"
	"github.com/m0serve/m0serve/server"
	"github.com/m0serve/m0serve/supervisor"
)

// Main runs m0serve with args (without the program's name) and returns
// its exit status: 0 on a clean stop, 2 for a usage or configuration
// mistake or an app that does not import (with --workers too), 3 when a
// worker dies while it starts or the app's lifespan startup fails.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg := server.Defaults
	cfg.Version = releaseVersion(version, buildInfo())
	fs, options := newFlagSet(&cfg)
	showVersion := fs.Bool("version", false, "print the version, the CPython serving (embedded or the host's, GIL on or off) and the backends (which one this machine takes) and exit")

	for _, o := range options {
		value, ok := os.LookupEnv(o.env)
		if !ok {
			continue
		}
		if err := setFlag(fs, fs.Lookup(o.name), value); err != nil {
			fmt.Fprintf(stderr, "m0serve: %s=%q (for --%s): %v\n", o.env, value, o.name, err)
			return 2
		}
	}
	apps, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs, options)
			return 0
		}
		fmt.Fprintf(stderr, "m0serve: %v (see --help)\n", err)
		return 2
	}
	forwardedAllowIPsFromEnv(fs, &cfg)
	if err := checkBindConflict(fs, args); err != nil {
		fmt.Fprintf(stderr, "m0serve: %v\n", err)
		return 2
	}
	if err := applyPeerOptions(fs, options, &cfg); err != nil {
		fmt.Fprintf(stderr, "m0serve: %v\n", err)
		return 2
	}
	warnUnknownVariables(stderr, options)
	if *showVersion {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	if doctor {
		return runDoctor(cfg, fs, apps, stdout, stderr)
	}
	if err := checkHost(cfg.Host); err != nil {
		fmt.Fprintf(stderr, "m0serve: %v\n", err)
		return 2
	}
	switch len(apps) {
	case 0:
		if len(cfg.Mounts) > 0 {
			cfg.App = firstMountedApp(cfg.Mounts) // each mount's own is loaded (server/mount.go)
		} else if cfg.Native == "" {
			fmt.Fprintf(stderr, "m0serve: no application: give module:attr, e.g. `m0serve main:app` (or --native NAME; see --help)\n")
			return 2
		}
	case 1:
		if len(cfg.Mounts) > 0 {
			fmt.Fprintf(stderr, "m0serve: --mount and the application %q: give one app, or mount each (--mount /=%s)\n", apps[0], apps[0])
			return 2
		}
		cfg.App = apps[0]
		if err := appFromFile(&cfg, fs.Lookup("app-dir").Value.String() != ""); err != nil {
			fmt.Fprintf(stderr, "m0serve: %v\n", err)
			return 2
		}
	default:
		fmt.Fprintf(stderr, "m0serve: one application at a time: got %s (flags go before or after it)\n", quoteAll(apps))
		return 2
	}

	if err := checkHostedVenv(cfg.Venv); err != nil {
		fmt.Fprintf(stderr, "m0serve: %v\n", err)
		return 2
	}
	if cfg.Native == "" {
		if err := checkPythonVersion(cfg.Venv); err != nil {
			fmt.Fprintf(stderr, "m0serve: %v\n", err)
			return 2
		}
	}
	if path := os.Getenv("M0_CPUPROFILE"); path != "" {
		// For engineers, not users (perf is not available everywhere):
		// a CPU profile of the whole run for `go tool pprof`, written at
		// a graceful exit.
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(stderr, "m0serve: M0_CPUPROFILE: %v\n", err)
			return 2
		}
		defer stop()
	}
	err = serve(cfg, fs, args, stderr)
	nameAsGiven(err, fs)
	var cfgErr *server.ConfigError
	var bootErr *supervisor.BootError
	var loadErr *server.AppLoadError
	var lifespanErr *server.LifespanError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &cfgErr):
		if logFormat == "json" {
			logError(stderr, err.Error())
		} else {
			// A command line's one line, as for a mistake in the flags.
			fmt.Fprintf(stderr, "m0serve: %v\n", err)
		}
		return 2
	case errors.As(err, &loadErr):
		// The app's mistake, not the server's, so no Go detail: the
		// Python traceback, or uvicorn's one line (loaderror.go).
		var pyErr *pybridge.LoadError
		if errors.As(err, &pyErr) {
			logError(stderr, loadErrorText(pyErr, &cfg, logLevel == "debug" || logLevel == "trace")...)
			return 2
		}
		logError(stderr, err.Error())
		return 2
	case errors.As(err, &bootErr):
		// The worker printed its traceback; the master says which. A
		// worker's 2 (the app did not import, a configuration mistake)
		// is the master's, as a single process's.
		logError(stderr, err.Error())
		if bootErr.Code == 2 {
			return 2
		}
		return 3
	case errors.As(err, &lifespanErr):
		// The app's own message (lifespan.startup.failed); uvicorn exits
		// with 3 for it too.
		logError(stderr, err.Error())
		return 3
	default:
		logError(stderr, err.Error())
		return 1
	}
}

// logError writes the failure serve returned as ERROR lines of the
// server's log, with their time and level as the log's others (with
// --log-format json, objects: every line of the stream parses).
func logError(stderr io.Writer, messages ...string) {
	format := logFormat
	if format != "json" {
		format = "text" // also when --log-format itself was the mistake
	}
	logf, err := server.NewLogf(stderr, format, "trace", logSlot)
	if err != nil {
		logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	for _, m := range messages {
		logf("m0serve: error: %s", m)
	}
}

// wsgiInlineUsage is --wsgi-inline's help; the measurements behind the
// default are in the README's Threads section.
const wsgiInlineUsage = "auto: with --threads 1 a quick bodyless request runs on the I/O thread while none is handed off " +
	"(no wake: README, Threads); off: never"

// threadsUsage is --threads' help; the measurements behind the default
// and behind 0 are in the README's Threads section.
const threadsUsage = "WSGI handler threads: more help an app that waits on I/O; " +
	"0 calls the app on the I/O thread (trade-offs: README, Threads)"

// option is one flag with its environment variable.
type option struct {
	name, env string
}

func newFlagSet(cfg *server.Config) (*flag.FlagSet, []option) {
	fs := flag.NewFlagSet("m0serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&bindAddress{fs: fs}, "bind", "gunicorn's address: sets --host and --port; unix:PATH sets --uds, fd://N --fd")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "address to listen on")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "TCP port to listen on (0: any free port)")
	fs.StringVar(&cfg.UDS, "uds", cfg.UDS, "listen on this Unix socket instead of --host/--port (a stale socket file is replaced; removed at exit)")
	fs.Var((*fileMode)(&cfg.UDSMode), "uds-mode", "with --uds: the socket file's permissions, in octal")
	fs.IntVar(&cfg.FD, "fd", cfg.FD, "accept on this inherited listening socket instead of --host/--port (-1: none; systemd's LISTEN_FDS is used by itself)")
	fs.IntVar(&cfg.Backlog, "backlog", cfg.Backlog, "listen backlog")
	fs.IntVar(&cfg.MaxConnections, "max-connections", cfg.MaxConnections, "open connections at most; at the limit accepting pauses")
	fs.IntVar(&cfg.LimitConcurrency, "limit-concurrency", cfg.LimitConcurrency, "answer 503 beyond this many non-idle connections or requests in flight, without calling the app (0: no limit)")
	fs.Var((*duration)(&cfg.HeaderTimeout), "header-timeout", "time to receive a request head (408 after)")
	fs.Var((*duration)(&cfg.KeepAliveTimeout), "keepalive-timeout", "idle time between requests before closing")
	fs.Var((*duration)(&cfg.BodyTimeout), "body-timeout", "longest stall while receiving a request body")
	fs.Var((*duration)(&cfg.GracefulTimeout), "graceful-timeout", "time to finish in-flight requests on SIGTERM/SIGINT, Python's stop included; a second signal exits at once (128+signal)")
	fs.Var((*size)(&cfg.MaxBodySize), "max-body-size", "largest request body in bytes (K, M, G suffixes); 413 beyond")
	fs.Var((*intSize)(&cfg.MaxHeadSize), "max-head-size", "largest request head in bytes (431 beyond; 414 for the request line)")
	fs.IntVar(&cfg.MaxFields, "max-fields", cfg.MaxFields, "most header fields in a request (431 beyond)")
	fs.IntVar(&cfg.MaxConnectionsPerIP, "max-connections-per-ip", cfg.MaxConnectionsPerIP, "open connections from one client address at most; the excess is reset (0: no limit)")
	fs.Var((*duration)(&cfg.SendTimeout), "send-timeout", "longest stall while sending a response before the connection closes")
	fs.Var((*size)(&cfg.BodyMinRate), "body-min-rate", "bytes/s a WSGI request body must average once over 64 KiB (408 below; 0: no minimum)")
	fs.StringVar(&cfg.Backend, "backend", cfg.Backend, "I/O backend: auto, uring, epoll or kqueue (auto falls back to epoll)")
	fs.StringVar(&cfg.Native, "native", cfg.Native, "serve a native Go handler instead of a Python app: "+server.NativeNames())
	fs.StringVar(&cfg.Interface, "interface", cfg.Interface, "the app's protocol: auto, wsgi or asgi (auto: ASGI for a coroutine function or __call__; asgi: ASGI 2 classes too)")
	fs.StringVar(&cfg.Loop, "loop", cfg.Loop, "ASGI event loop: auto, asyncio or uvloop (auto: asyncio on the I/O thread; with --asgi-thread executor uvloop if it imports)")
	fs.StringVar(&cfg.ASGIThread, "asgi-thread", cfg.ASGIThread, "ASGI loop's thread: auto, loop (the I/O one: 0.5-0.9x executor's CPU) or executor (auto: loop unless --loop uvloop or --request-timeout)")
	fs.StringVar(&cfg.Lifespan, "lifespan", cfg.Lifespan, "ASGI lifespan protocol: auto, on or off (auto: go on if the app refuses it; a failed startup exits 3)")
	fs.BoolVar(&cfg.Factory, "factory", cfg.Factory, "module:attr names a factory: call attr() to get the app")
	fs.StringVar(&cfg.AppDir, "app-dir", cfg.AppDir, "directory put first on sys.path to import the app from (default: the working directory)")
	fs.StringVar(&cfg.Venv, "venv", cfg.Venv, "virtualenv whose site-packages the app imports from (default: $VIRTUAL_ENV, if set)")
	fs.StringVar(&cfg.RootPath, "root-path", cfg.RootPath, "prefix the app is mounted under, which the proxy strips: WSGI SCRIPT_NAME; ASGI root_path, put before path as uvicorn does")
	fs.IntVar(&cfg.Threads, "threads", cfg.Threads, threadsUsage)
	fs.StringVar(&cfg.WSGIInline, "wsgi-inline", cfg.WSGIInline, wsgiInlineUsage)
	fs.IntVar(&cfg.MaxClientWaits, "max-client-waits", cfg.MaxClientWaits, "WSGI spare threads running the app while handler threads wait on slow clients (0: none)")
	fs.BoolVar(&cfg.AccessLog, "access-log", cfg.AccessLog, "log every response to stderr in the Common Log Format; off unless given, unlike uvicorn, for its CPU cost (bench/README.md, The access log's cost)")
	fs.StringVar(&cfg.AccessLogFormat, "access-log-format", cfg.AccessLogFormat, "the access log's line in gunicorn's atoms (%(D)s, %({name}i)s, ...: README)")
	fs.BoolVar(&cfg.ProxyHeaders, "proxy-headers", cfg.ProxyHeaders, "take the client's address and scheme from the --forwarded-headers fields sent by --forwarded-allow-ips peers")
	fs.StringVar(&cfg.ForwardedHeaders, "forwarded-headers", cfg.ForwardedHeaders, "with --proxy-headers: the fields the proxy sets, x-forwarded (X-Forwarded-For/-Proto) or forwarded (RFC 7239); the other is ignored")
	fs.StringVar(&cfg.ForwardedAllowIPs, "forwarded-allow-ips", cfg.ForwardedAllowIPs, "with --proxy-headers: the proxies to believe, addresses and CIDRs, comma-separated, * for all (else $FORWARDED_ALLOW_IPS)")
	addWorkerFlags(fs, cfg)
	addSeedFlags(fs, cfg)
	addTLSFlags(fs, cfg)
	addHTTP2Flags(fs, cfg)
	addRealtimeFlags(fs, cfg)
	addPeerFlags(fs, cfg)
	fs.BoolVar(&cfg.NoServerHeader, "no-server-header", cfg.NoServerHeader, "send no Server field (an app's own still goes out)")
	fs.BoolVar(&cfg.NoDateHeader, "no-date-header", cfg.NoDateHeader, "send no Date field (an app's own still goes out)")
	fs.Var((*headerList)(&cfg.Headers), "header", "NAME:VALUE field added to every response that does not set NAME itself; "+
		"repeatable; in M0_HEADER one per line (Server:NAME replaces m0serve's)")
	fs.StringVar(&cfg.WS, "ws", cfg.WS, "WebSocket support: auto or none (none: no upgrade is accepted)")
	fs.Var((*size)(&cfg.WSMaxSize), "ws-max-size", "largest WebSocket message in bytes (K, M, G suffixes); closed with 1009 beyond")
	fs.IntVar(&cfg.WSMaxQueue, "ws-max-queue", cfg.WSMaxQueue, "WebSocket messages the app may leave untaken before the connection stops being read (or 1 MiB of them)")
	fs.Var((*duration)(&cfg.WSPingInterval), "ws-ping-interval", "time between the server's WebSocket pings (0: no pings)")
	fs.Var((*duration)(&cfg.WSPingTimeout), "ws-ping-timeout", "time a WebSocket ping may go unanswered before closing with 1011")
	fs.BoolVar(&cfg.WSPerMessageDeflate, "ws-per-message-deflate", cfg.WSPerMessageDeflate, "accept permessage-deflate compression of WebSocket messages")
	// Every flag defined here reads M0_ and its name in upper case, dashes
	// as underscores (--version, added by the caller, has none; nor has
	// --bind, which sets others that have theirs).
	var options []option
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "bind" {
			return
		}
		env := "M0_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		options = append(options, option{f.Name, env})
	})
	return fs, options
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		file.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		file.Close()
	}, nil
}
