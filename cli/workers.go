package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/m0serve/m0serve/server"
	"github.com/m0serve/m0serve/supervisor"
)

// master is the --workers configuration the flags fill in.
var master supervisor.Config

// The log's --log-level and --log-format, and the worker's slot it
// names (-1: a master or a single process).
var (
	logLevel, logFormat string
	logSlot             = -1
)

// --static-path-mount and --static-path-route, paired in order.
var staticMountDirs, staticRoutes stringList

// --reload and its lists.
var (
	reload                                     bool
	reloadDirs, reloadIncludes, reloadExcludes stringList
)

// addWorkerFlags defines the flags of the master and its workers, and of
// the log files.
func addWorkerFlags(fs *flag.FlagSet, cfg *server.Config) {
	master = supervisor.Defaults
	fs.IntVar(&master.Workers, "workers", 0, "worker processes under a master (0: one process, no master; else WEB_CONCURRENCY when set)")
	fs.StringVar(&master.Listener, "listener", master.Listener, "with --workers: reuseport (one SO_REUSEPORT socket per worker, Linux) or shared (one socket for all)")
	fs.Var((*duration)(&master.WorkerTimeout), "worker-timeout", "with --workers: kill and replace a worker whose loop has not turned for this long (0: off)")
	fs.IntVar(&master.MaxRequests, "max-requests", 0, "with --workers: replace a worker after it served this many requests (0: never)")
	fs.IntVar(&master.MaxRequestsJitter, "max-requests-jitter", 0, "with --max-requests: add rand(0..N) per worker, so they do not all recycle at once")
	fs.Var((*duration)(&master.MaxWorkerLifetime), "max-worker-lifetime", "with --workers: replace a worker after it has run this long (0: off)")
	fs.Var((*duration)(&cfg.RequestTimeout), "request-timeout", "with --workers: answer 504 to a request in the app this long, log Python's stacks and replace the worker (0: off)")
	fs.Int64Var(&master.MaxWorkerRSS, "max-worker-rss", 0, "with --workers: replace a worker whose resident memory is over this many MiB in two samples running (0: off)")
	fs.Var((*duration)(&master.RSSCheckInterval), "rss-check-interval", "with --max-worker-rss: how often the master samples /proc/PID/statm")
	fs.BoolVar(&reload, "reload", false, "restart the workers when a source file changes (development only, not for production)")
	fs.Var(&reloadDirs, "reload-dir", "with --reload: a directory to watch (repeatable; default: --app-dir or the working directory)")
	fs.Var(&reloadIncludes, "reload-include", "with --reload: a file-name glob that counts (repeatable; default *.py)")
	fs.Var(&reloadExcludes, "reload-exclude", "with --reload: a file or directory glob to ignore (repeatable; default .* .py[cod] .sw.* ~*)")
	fs.Var(&staticMountDirs, "static-path-mount", "a directory whose files the server serves itself, without the app (repeatable)")
	fs.Var(&staticRoutes, "static-path-route", "the path each --static-path-mount is served under, in order (default /static for one)")
	fs.Var((*duration)(&cfg.StaticExpires), "static-path-expires", "Cache-Control max-age of static files (0: none)")
	fs.BoolVar(&cfg.StaticDotfiles, "static-path-dotfiles", cfg.StaticDotfiles, "serve static files and directories whose names start with a dot (.env, .well-known; else 404)")
	fs.StringVar(&cfg.MetricsAddress, "metrics-address", cfg.MetricsAddress, "serve Prometheus metrics at http://HOST:PORT/metrics (the master's with --workers; off when empty)")
	fs.StringVar(&master.PidFile, "pid-file", "", "with --workers: write the master's pid to this file (removed at exit)")
	fs.StringVar(&cfg.AccessLogFile, "access-log-file", cfg.AccessLogFile, "write the access log to this file (implies --access-log); reopened on SIGUSR1")
	fs.StringVar(&logLevel, "log-level", "info", "the server's log: critical, error, warning, info, debug or trace and above (debug: io_uring's features, importlib's frames)")
	fs.StringVar(&logFormat, "log-format", "text", "the server's log lines: text, or json (one object per line: time, level, msg, pid, worker; the access log's too)")
	fs.StringVar(&cfg.ErrorLogFile, "error-log-file", cfg.ErrorLogFile, "write the server's log and Python's stderr to this file; reopened on SIGUSR1")
}

// serve runs cfg as the process this is: a worker its master started, a
// master (--workers), or the single process of today.
func serve(cfg server.Config, fs *flag.FlagSet, args []string, stderr io.Writer) error {
	worker, err := server.WorkerFromEnv()
	if err != nil {
		return err
	}
	if err := pairStaticMounts(&cfg); err != nil {
		return err
	}
	slot := -1
	if worker != nil {
		slot = worker.Slot
	}
	logSlot = slot
	logf, err := server.NewLogf(stderr, logFormat, logLevel, slot)
	if err != nil {
		return err
	}
	cfg.LogFormat = logFormat
	cfg.Given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { cfg.Given[f.Name] = true })
	if cfg.AccessLogFile != "" {
		cfg.AccessLog = true
	}
	if err := server.ReopenLogFiles(&cfg); err != nil {
		return err
	}
	if worker != nil {
		cfg.Worker = worker
		return server.Run(cfg, logf)
	}
	if err := workersFromEnv(fs); err != nil {
		return err
	}
	if reload {
		if err := setReload(&cfg); err != nil {
			return err
		}
	}
	if master.Workers != 0 {
		master.Server, master.Args, master.Command = masterServer{&cfg}, args, hostedWorkerCommand()
		return supervisor.Run(master, logf)
	}
	if name := masterOnlyFlag(fs); name != "" {
		return &server.ConfigError{Flag: name, Reason: "applies to worker processes: give --workers N too"}
	}
	if cfg.AccessLogFile != "" || cfg.ErrorLogFile != "" {
		reopenOnSIGUSR1(&cfg, logf)
	}
	return server.Run(cfg, logf)
}

// workersFromEnv reads WEB_CONCURRENCY, as uvicorn and gunicorn do, when
// neither --workers nor M0_WORKERS was given.
func workersFromEnv(fs *flag.FlagSet) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "workers" })
	text, ok := os.LookupEnv("WEB_CONCURRENCY")
	if given || !ok {
		return nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 {
		return &server.ConfigError{Flag: "workers", Reason: fmt.Sprintf("WEB_CONCURRENCY=%q: want a number of workers", text)}
	}
	master.Workers = n
	return nil
}

// masterOnlyFlag names a flag given that only a master uses, or "".
func masterOnlyFlag(fs *flag.FlagSet) string {
	name := ""
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listener", "worker-timeout", "max-requests", "max-requests-jitter",
			"max-worker-lifetime", "max-worker-rss", "rss-check-interval", "pid-file", "request-timeout":
			name = f.Name
		}
	})
	return name
}

func reopenOnSIGUSR1(cfg *server.Config, logf func(string, ...any)) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGUSR1)
	go func() {
		for range signals {
			if err := server.ReopenLogFiles(cfg); err != nil {
				logf("m0serve: error: reopening log files: %v", err)
			}
		}
	}()
}

// forwardedAllowIPsFromEnv reads FORWARDED_ALLOW_IPS, as uvicorn and
// gunicorn do, when neither --forwarded-allow-ips nor its M0_ variable
// was given.
func forwardedAllowIPsFromEnv(fs *flag.FlagSet, cfg *server.Config) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "forwarded-allow-ips" })
	if text, ok := os.LookupEnv("FORWARDED_ALLOW_IPS"); ok && !given {
		cfg.ForwardedAllowIPs = text
	}
}

// setReload makes the master watch the app's sources: --reload runs one
// worker under a master when --workers is not given, as uvicorn's
// reloader runs the server in a child process.
func setReload(cfg *server.Config) error {
	dirs := []string(reloadDirs)
	if len(dirs) == 0 {
		dir := cfg.AppDir
		if dir == "" {
			var err error
			if dir, err = os.Getwd(); err != nil {
				return fmt.Errorf("--reload: %w", err)
			}
		}
		dirs = []string{dir}
	}
	r := &supervisor.Reload{Dirs: dirs, Includes: reloadIncludes, Excludes: reloadExcludes}
	if len(r.Includes) == 0 {
		r.Includes = supervisor.DefaultReloadIncludes
	}
	if len(r.Excludes) == 0 {
		r.Excludes = supervisor.DefaultReloadExcludes
	}
	master.Reload = r
	if master.Workers == 0 {
		master.Workers = 1
	}
	return nil
}

// pairStaticMounts pairs each --static-path-mount with the
// --static-path-route given in the same place; one mount alone may go
// without, at /static (Granian's default).
func pairStaticMounts(cfg *server.Config) error {
	routes := []string(staticRoutes)
	if len(routes) == 0 && len(staticMountDirs) == 1 {
		routes = []string{"/static"}
	}
	if len(routes) != len(staticMountDirs) {
		return &server.ConfigError{Flag: "static-path-route", Reason: fmt.Sprintf("%d routes for %d --static-path-mount directories: give one each, in order", len(routes), len(staticMountDirs))}
	}
	for i, dir := range staticMountDirs {
		cfg.StaticMounts = append(cfg.StaticMounts, server.StaticMount{Route: routes[i], Dir: dir})
	}
	return seedStaticMounts(cfg, doctor)
}
