// Package server wires a configuration into a running worker: the
// listening socket, the backend, the loop, handler threads and signals.
package server

import (
	"fmt"
	"github.com/m0serve/m0serve/internal/configerr"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/http2"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/realtime"
	"github.com/m0serve/m0serve/tlsrec"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is the whole server configuration, as package cli parses it from
// flags and M0_* environment variables.
type Config struct {
	Host             string
	Port             int
	UDS              string      // a Unix socket's path instead of Host/Port
	UDSMode          fs.FileMode // the Unix socket file's mode
	FD               int         // an inherited listening socket instead of Host/Port; -1: none
	Backlog          int
	MaxConnections   int
	LimitConcurrency int // 503 from the loop beyond this many busy connections or requests in flight; 0: off
	HeaderTimeout    time.Duration
	KeepAliveTimeout time.Duration
	BodyTimeout      time.Duration
	GracefulTimeout  time.Duration
	RequestTimeout   time.Duration // with --workers: 504 and recycle past it; 0: off
	MaxBodySize      int64
	MaxHeadSize      int
	MaxFields        int
	// MaxKeepAliveRequests closes a connection after this many requests
	// (the seed's --max-keepalive-requests); 0: never.
	MaxKeepAliveRequests int
	Backend              string // auto, uring, epoll, kqueue
	Native               string // a native Go handler's name

	// What one client may hold of a worker.
	MaxConnectionsPerIP int           // open connections from one address; 0: no limit
	SendTimeout         time.Duration // longest stall while a response is sent
	BodyMinRate         int64         // bytes/s a request body handed to a handler thread must keep up (408 below); 0: none

	// The Python application (package pybridge).
	App       string // "module:attr", the app to serve
	Interface string // auto, wsgi or asgi
	Loop      string // ASGI event loop: auto, asyncio or uvloop
	Lifespan  string // ASGI lifespan protocol: auto, on or off
	Factory   bool   // call attr() to get the app
	AppDir    string // first on sys.path; empty: the working directory
	Venv      string // a virtualenv whose site-packages is importable; empty: $VIRTUAL_ENV
	RootPath  string // SCRIPT_NAME: the prefix the app is mounted under
	LogConfig string // a logging configuration file for Python's logging, applied before the app imports
	Threads   int    // handler threads calling the app
	// WSGIInline is auto (the loop thread runs a quick request itself
	// while the handler threads are idle: inline_policy.go) or off.
	WSGIInline string
	AccessLog  bool // one common-log-format line per response on stderr

	// ASGIThread is where the ASGI event loop runs: loop (the I/O
	// thread steps it), executor (a thread of its own) or auto (loop
	// unless Loop is uvloop or RequestTimeout is set).
	ASGIThread string

	// MaxClientWaits: spare handler threads at most, each standing in for
	// a handler thread blocked on its client; 0: none.
	MaxClientWaits int

	AccessLogFile string // the access log's file instead of stderr (implies AccessLog)
	// AccessLogFormat is gunicorn's access_log_format (atoms %(h)s ...).
	AccessLogFormat string
	accessFormat    *accessFormat // compiled by Validate
	ErrorLogFile    string        // the server's log (and Python's stderr) instead of stderr
	// LogFormat is --log-format, text or json: with json the access log's
	// lines are JSON objects too (accessjson.go).
	LogFormat string

	// StaticMounts are served by the server itself, StaticExpires their
	// Cache-Control max-age (0: none).
	StaticMounts  []StaticMount
	StaticExpires time.Duration
	// StaticDotfiles serves names with a segment starting with a dot
	// (.env); off, they are 404.
	StaticDotfiles bool

	// ProxyHeaders believes X-Forwarded-For/-Proto, or Forwarded when
	// ForwardedHeaders says so, from the peers ForwardedAllowIPs lists
	// (addresses, CIDR prefixes, "*"). The other family is ignored: a
	// proxy sets one and passes the client's own copy of the other
	// through (nginx does).
	ProxyHeaders      bool
	ForwardedHeaders  string // "x-forwarded" (default) or "forwarded"
	ForwardedAllowIPs string
	proxyTrust        *proxyTrust // parsed by Validate

	// Mounts serve several WSGI apps in one process, each under its
	// prefix (mount.go); App is then the first one's spec.
	Mounts []Mount

	// HealthPath, when set, is answered by the server with a liveness
	// JSON, never by the app; Metrics serves Prometheus' text at
	// MetricsPath of the serving port (answers.go). The seed's flags.
	HealthPath string
	Metrics    bool
	registry   *prometheus.Registry // this process's, when either is on (Run)
	// StaticCacheControl replaces the static files' max-age
	// Cache-Control; StaticHeaders ("Name: value") go on every static
	// response, errors included (static_fields.go).
	StaticCacheControl string
	StaticHeaders      []string

	// MetricsAddress, when set, is where Prometheus metrics are served
	// (/metrics): by the master with --workers (whose workers keep their
	// counters for it), else by the process itself.
	MetricsAddress string
	appStats       *AppStats // the handlers' counters when metrics are on (Run)

	// Given names the flags the user set (on the command line or in
	// M0_*): one that does nothing for the app's interface is warned of.
	Given map[string]bool

	// Version is the release the binary carries (package cli's stamp):
	// the environ's SERVER_SOFTWARE is m0serve/Version.
	Version string

	// Worker is set in a worker process a master started (package
	// supervisor): the listener comes from it, and it hears the master.
	Worker *Worker

	// Response fields the server adds unless the app sets its own.
	NoServerHeader bool     // no Server field
	NoDateHeader   bool     // no Date field
	Headers        []string // "Name: value" fields (--header); a Server one replaces m0serve's

	// TLS (tls.go): uvicorn's --ssl-* flags; on when TLS.CertFile is set.
	TLS tlsrec.Settings
	tls *tlsrec.Server // loaded by Validate

	// WebSockets (websocket.go); names follow uvicorn's flags.
	WS                  string // auto or none
	WSMaxSize           int64
	WSMaxQueue          int
	WSPingInterval      time.Duration // 0: no pings
	WSPingTimeout       time.Duration
	WSPerMessageDeflate bool

	// Realtime (realtime.go): --realtime holds the streams a view asks
	// for (M0-Hold) and serves m0pub's bus; ReplayFrames is
	// --replay-frames, SSEHeartbeat M0_SSE_HEARTBEAT_MS.
	Realtime     bool
	ReplayFrames int
	SSEHeartbeat time.Duration
	PGListen     string       // --pg-listen: a Postgres URL (pglisten)
	realtime     *realtimeBus // opened by Run

	// HTTP/2 (http2.go); names follow Granian's flags.
	HTTP                      string // auto, 1 or 2
	HTTP2MaxConcurrentStreams int
	HTTP2InitialWindowSize    int
	HTTP2MaxFrameSize         int
	HTTP2MaxHeaderListSize    int
}

// Defaults is the configuration unless told otherwise, shared with
// cli's --help. What the loop and the HTTP parser also default
// comes from their constants, so each lives in one place.
var Defaults = Config{
	Host:             "127.0.0.1",
	Port:             8000,
	UDSMode:          0o666,
	FD:               -1,
	Backlog:          4096,
	MaxConnections:   loop.DefaultMaxConnections,
	HeaderTimeout:    loop.DefaultHeaderTimeout,
	KeepAliveTimeout: loop.DefaultKeepAliveTimeout,
	BodyTimeout:      loop.DefaultBodyTimeout,
	GracefulTimeout:  30 * time.Second,
	MaxBodySize:      loop.DefaultMaxBodySize,
	MaxHeadSize:      http1.DefaultLimits.MaxHeadBytes,
	MaxFields:        http1.DefaultLimits.MaxFields,
	Backend:          "auto",
	SendTimeout:      loop.DefaultSendTimeout,
	BodyMinRate:      500,
	Interface:        "auto",
	Loop:             "auto",
	Lifespan:         "auto",
	ASGIThread:       "auto",
	Threads:          DefaultThreads,
	WSGIInline:       DefaultWSGIInline,
	MaxClientWaits:   DefaultMaxClientWaits,

	WS:                  "auto",
	WSMaxSize:           loop.DefaultWebSocketMaxMessage,
	WSMaxQueue:          loop.DefaultWebSocketMaxQueue,
	WSPingInterval:      loop.DefaultWebSocketPingInterval,
	WSPingTimeout:       loop.DefaultWebSocketPingTimeout,
	WSPerMessageDeflate: true,
	ForwardedAllowIPs:   "127.0.0.1",
	ForwardedHeaders:    "x-forwarded",
	StaticExpires:       24 * time.Hour,
	AccessLogFormat:     DefaultAccessLogFormat,

	HTTP:                      "auto",
	HTTP2MaxConcurrentStreams: int(http2.Defaults.MaxConcurrentStreams),
	HTTP2InitialWindowSize:    int(http2.Defaults.InitialWindowSize),
	HTTP2MaxFrameSize:         int(http2.Defaults.MaxFrameSize),
	HTTP2MaxHeaderListSize:    int(http2.Defaults.MaxHeaderListSize),

	ReplayFrames: realtime.DefaultReplayFrames,
	SSEHeartbeat: DefaultSSEHeartbeat,
}

// ConfigError is a configuration mistake: the command line reports it in
// one line and exits with status 2.
type ConfigError = configerr.Error

// Validate checks what flag parsing cannot.
func (c *Config) Validate() error {
	switch {
	case c.Port < 0 || c.Port > 65535:
		return &ConfigError{Flag: "port", Reason: fmt.Sprintf("%d is not a TCP port (0-65535)", c.Port)}
	case c.UDS != "" && c.FD >= 0:
		return &ConfigError{Flag: "uds", Reason: "and --fd: one listener at a time"}
	case c.FD < -1:
		return &ConfigError{Flag: "fd", Reason: fmt.Sprintf("%d: not a descriptor", c.FD)}
	case c.UDSMode&^fs.ModePerm != 0:
		return &ConfigError{Flag: "uds-mode", Reason: fmt.Sprintf("%o: want permission bits such as 666 or 660", c.UDSMode)}
	case c.Backlog < 1:
		return &ConfigError{Flag: "backlog", Reason: "must be at least 1"}
	case c.MaxConnections < 1:
		return &ConfigError{Flag: "max-connections", Reason: "must be at least 1"}
	case c.LimitConcurrency < 0:
		return &ConfigError{Flag: "limit-concurrency", Reason: "must not be negative (0: no limit)"}
	case c.HeaderTimeout <= 0:
		return &ConfigError{Flag: "header-timeout", Reason: "must be positive"}
	case c.KeepAliveTimeout <= 0:
		return &ConfigError{Flag: "keepalive-timeout", Reason: "must be positive"}
	case c.BodyTimeout <= 0:
		return &ConfigError{Flag: "body-timeout", Reason: "must be positive"}
	case c.GracefulTimeout <= 0:
		return &ConfigError{Flag: "graceful-timeout", Reason: "must be positive"}
	case c.RequestTimeout < 0:
		return &ConfigError{Flag: "request-timeout", Reason: "must not be negative (0: off)"}
	case c.RequestTimeout > 0 && c.Threads == 0 && c.App != "":
		return &ConfigError{Flag: "request-timeout", Reason: "--threads 0 runs the app on the I/O thread, which cannot time it out (--worker-timeout does): give --threads 1 or more"}
	case c.WSGIInline != "auto" && c.WSGIInline != "off":
		return &ConfigError{Flag: "wsgi-inline", Reason: fmt.Sprintf("%q: want auto or off", c.WSGIInline)}
	case c.MaxBodySize < 0:
		return &ConfigError{Flag: "max-body-size", Reason: "must not be negative"}
	case c.MaxHeadSize < 256:
		return &ConfigError{Flag: "max-head-size", Reason: "must be at least 256 bytes"}
	case c.MaxFields < 1:
		return &ConfigError{Flag: "max-fields", Reason: "must be at least 1"}
	case c.MaxKeepAliveRequests < 0:
		return &ConfigError{Flag: "max-keepalive-requests", Reason: "must not be negative (0: never)"}
	case c.MaxConnectionsPerIP < 0:
		return &ConfigError{Flag: "max-connections-per-ip", Reason: "must not be negative"}
	case c.SendTimeout <= 0:
		return &ConfigError{Flag: "send-timeout", Reason: "must be positive"}
	case c.BodyMinRate < 0:
		return &ConfigError{Flag: "body-min-rate", Reason: "must not be negative"}
	}
	if err := c.validateWebSocket(); err != nil {
		return err
	}
	if err := c.validateRealtime(); err != nil {
		return err
	}
	if err := c.validateHTTP2(); err != nil {
		return err
	}
	switch c.Backend {
	case "auto":
	case "uring", "epoll":
		if runtime.GOOS != "linux" {
			return &ConfigError{Flag: "backend", Reason: c.Backend + ": not available on " + runtime.GOOS}
		}
	case "kqueue":
		if runtime.GOOS == "linux" {
			return &ConfigError{Flag: "backend", Reason: "kqueue: not available on linux"}
		}
	default:
		return &ConfigError{Flag: "backend", Reason: fmt.Sprintf("%q: want auto, uring, epoll or kqueue", c.Backend)}
	}
	if _, _, err := c.responseFields(); err != nil {
		return err
	}
	for _, m := range c.StaticMounts {
		if !strings.HasPrefix(m.Route, "/") || strings.ContainsAny(m.Route, "?#%") {
			return &ConfigError{Flag: "static-path-route", Reason: fmt.Sprintf("%q: want a path starting with /", m.Route)}
		}
		if info, err := os.Stat(m.Dir); err != nil || !info.IsDir() {
			return &ConfigError{Flag: "static-path-mount", Reason: fmt.Sprintf("%s: not a directory", m.Dir)}
		}
	}
	if err := c.validateMounts(); err != nil {
		return err
	}
	if err := c.validateAnswers(); err != nil {
		return err
	}
	if c.StaticExpires < 0 {
		return &ConfigError{Flag: "static-path-expires", Reason: "must not be negative"}
	}
	format, err := compileAccessFormat(c.AccessLogFormat)
	if err != nil {
		return err
	}
	if c.LogFormat == "json" {
		slot := -1
		if c.Worker != nil {
			slot = c.Worker.Slot
		}
		format.setJSON(slot)
	}
	c.accessFormat = format
	if c.ForwardedHeaders != "x-forwarded" && c.ForwardedHeaders != "forwarded" {
		return &ConfigError{Flag: "forwarded-headers", Reason: fmt.Sprintf("%q: want x-forwarded or forwarded", c.ForwardedHeaders)}
	}
	if c.ProxyHeaders {
		trust, err := newProxyTrust(c.ForwardedAllowIPs)
		if err != nil {
			return err
		}
		trust.forwarded = c.ForwardedHeaders == "forwarded"
		c.proxyTrust = trust
	}
	if err := c.loadTLS(); err != nil {
		return err
	}
	if c.App != "" {
		return c.validatePython()
	}
	if c.Native == "" {
		return &ConfigError{Flag: "", Reason: "no application: give module:attr, or --native with one of " + NativeNames()}
	}
	if _, ok := natives[c.Native]; !ok {
		return &ConfigError{Flag: "native", Reason: fmt.Sprintf("%q: unknown; want one of %s", c.Native, NativeNames())}
	}
	return nil
}

func (c *Config) validatePython() error {
	if c.Native != "" {
		return &ConfigError{Flag: "native", Reason: fmt.Sprintf("%q and the Python app %q: serve one or the other", c.Native, c.App)}
	}
	// Without :attr the bridge looks for application, then app.
	module, attr, ok := strings.Cut(c.App, ":")
	if module == "" || ok && attr == "" {
		return &ConfigError{Flag: "", Reason: fmt.Sprintf("application %q: want module:attr (e.g. myproject.wsgi:application)", c.App)}
	}
	switch c.Interface {
	case "auto", "wsgi", "asgi":
	default:
		return &ConfigError{Flag: "interface", Reason: fmt.Sprintf("%q: want auto, wsgi or asgi", c.Interface)}
	}
	if _, ok := asgiLoops[c.Loop]; !ok {
		return &ConfigError{Flag: "loop", Reason: fmt.Sprintf("%q: want auto, asyncio or uvloop", c.Loop)}
	}
	if _, ok := asgiLifespans[c.Lifespan]; !ok {
		return &ConfigError{Flag: "lifespan", Reason: fmt.Sprintf("%q: want auto, on or off", c.Lifespan)}
	}
	switch c.ASGIThread {
	case "auto", "executor":
	case "loop":
		if c.Loop == "uvloop" {
			return &ConfigError{Flag: "asgi-thread", Reason: `"loop" steps asyncio's event loop; --loop uvloop needs --asgi-thread executor`}
		}
		if c.RequestTimeout > 0 {
			return &ConfigError{Flag: "asgi-thread", Reason: `"loop": --request-timeout needs the I/O thread free to answer 504 while the app is stuck; use --asgi-thread executor`}
		}
	default:
		return &ConfigError{Flag: "asgi-thread", Reason: fmt.Sprintf("%q: want auto, loop or executor", c.ASGIThread)}
	}
	if c.Threads < 0 || c.Threads > maxThreads {
		return &ConfigError{Flag: "threads", Reason: fmt.Sprintf("%d: want 0 to %d", c.Threads, maxThreads)}
	}
	if c.MaxClientWaits < 0 || c.MaxClientWaits > maxClientWaits {
		return &ConfigError{Flag: "max-client-waits", Reason: fmt.Sprintf("%d: want 0 to %d", c.MaxClientWaits, maxClientWaits)}
	}
	if c.RootPath != "" && (c.RootPath[0] != '/' || strings.ContainsAny(c.RootPath, "?#")) {
		return &ConfigError{Flag: "root-path", Reason: fmt.Sprintf("%q: want a path starting with / (no query)", c.RootPath)}
	}
	return nil
}

// maxHeaders bounds --header (the loop's limit: a response's field names
// are marked in one word).
const maxHeaders = 62

// responseFields is the Server value (nil: none) and the --header fields
// the loop adds to responses that do not set them.
func (c *Config) responseFields() (server []byte, headers []http1.FieldLine, err error) {
	if !c.NoServerHeader {
		server = []byte("m0serve")
	}
	for _, h := range c.Headers {
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || !http1.ValidFieldName([]byte(name)):
			return nil, nil, &ConfigError{Flag: "header", Reason: fmt.Sprintf("%q: want NAME:VALUE (e.g. X-Frame-Options:DENY)", h)}
		case !http1.ValidFieldValue([]byte(value)):
			return nil, nil, &ConfigError{Flag: "header", Reason: fmt.Sprintf("%q: the value holds a control character", h)}
		}
		switch strings.ToLower(name) {
		case "server":
			if !c.NoServerHeader {
				server = []byte(value)
			}
			continue
		case "date":
			return nil, nil, &ConfigError{Flag: "header", Reason: fmt.Sprintf("%q: the server writes Date (--no-date-header leaves it out)", h)}
		case "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "proxy-connection":
			return nil, nil, &ConfigError{Flag: "header", Reason: fmt.Sprintf("%q: %s frames the message; the server writes it", h, name)}
		}
		headers = append(headers, http1.FieldLine{Name: []byte(name), Value: []byte(value)})
	}
	if len(headers) > maxHeaders {
		return nil, nil, &ConfigError{Flag: "header", Reason: fmt.Sprintf("%d fields: at most %d", len(headers), maxHeaders)}
	}
	return server, headers, nil
}
