package loop

import (
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/tlsrec"
)

// Config is what a Loop needs. Zero durations and sizes take the defaults
// below.
type Config struct {
	// NewBackend creates the I/O backend. It is called on the loop's own
	// locked OS thread, so a ring set up with SINGLE_ISSUER is submitted
	// to from the thread that created it.
	NewBackend func() (Backend, error)
	// ListenFD is the listening socket (non-blocking).
	ListenFD int

	Handler Handler
	// Jobs receives the requests Handler defers; nil makes a deferral a
	// 500 (no handler threads).
	Jobs *JobQueue

	MaxConnections int
	// LimitConcurrency, when positive, answers 503 (and closes) a request
	// that arrives while more connections than this have a request under
	// way (idle ones are not counted) or this many deferred requests are
	// in flight, without calling the handler.
	LimitConcurrency int
	HeaderTimeout    time.Duration // a request head must complete within this (408)
	KeepAliveTimeout time.Duration // idle time between requests before a silent close
	BodyTimeout      time.Duration // longest stall while a request body is read
	MaxBodySize      int64         // 413 beyond it; 0: DefaultMaxBodySize, <0: no limit
	Limits           http1.Limits
	// Server is the Server field value; nil sends none. A handler's own
	// Server field goes out instead.
	Server []byte
	// NoDate: no Date field (a handler's own still goes out).
	NoDate bool
	// Headers go out on every response whose handler did not set the
	// same name (--header), after the handler's; at most 62, and no
	// framing, hop-by-hop, Server or Date field.
	Headers []http1.FieldLine

	// MaxConnectionsPerIP bounds the connections open from one client
	// address; the excess is reset as it is accepted. 0: no bound.
	MaxConnectionsPerIP int
	// SendTimeout closes a connection whose client reads nothing of a
	// response for this long; the handler's write fails.
	SendTimeout time.Duration
	// BufferBodies: a deferred request whose body fits the job's inbox
	// (64 KiB) is queued only once the body is in, so a handler thread
	// never waits on a slow client for it.
	BufferBodies bool
	// BodyMinRate is the rate in bytes per second a request body must
	// keep up, measured over bodyRateWindow while the loop waits for it;
	// below it the request gets 408 and the connection closes. 0: none.
	BodyMinRate int64
	// ClientWaitLimit is how many handlers may be blocked on their
	// clients at once (Job.SetClientWaiter's waits: handler threads and
	// their spares) before the loop closes their connections, on its
	// once-a-second tick (shedClientWaits). 0: never.
	ClientWaitLimit int

	// Logf reports conditions worth an operator's attention; nil discards.
	Logf func(format string, args ...any)
	// OnStart is called on the loop thread once the backend is up, with
	// its description.
	OnStart func(backendName string)
	// OnExit is called on the loop thread as Run returns (after OnStart
	// was called): a handler that keeps per-thread state on the loop
	// thread (an inline Python thread state) releases it there.
	OnExit func()
	// Stats, when set, is kept up to date by the loop thread.
	Stats *Stats
	// OnPassEnd, when set, is called on the loop thread at the end of
	// each pass, after the sends are queued: what inline handlers
	// gathered during the pass (access-log lines) goes out in one write.
	OnPassEnd func()
	// Realtime, when set, lets a deferred response hold its connection
	// (Job.Hold; hold.go).
	Realtime *Realtime
	// Stepper, when set, runs on the loop thread in every pass, after the
	// pass's completions are handled and before the news of jobs is
	// drained: another event loop this one drives (an ASGI app's asyncio
	// loop, so a request it answers at once goes out in the same pass).
	Stepper Stepper
	// OnJobGone is called on the loop thread when the client of a job a
	// handler still holds closes (how: ConnectionClosed) or ends its input
	// (InputEnded, which may come first), with the owner the handler set
	// (Job.SetOwner; never for none, and what came before, SetOwner
	// reports). It runs under the job's lock, so the job cannot finish
	// under it: it must not block nor call the job's methods. An event-loop
	// handler uses it to tell a task waiting on no read or write; when it
	// is set, a receive stays armed while a job runs.
	OnJobGone func(owner any, how JobGone)
	// OnJobWritten is called on the loop thread, under the job's lock as
	// OnJobGone is, when the outbox of a job whose Post left it full has
	// gone to the connection: the poster may post again. A job whose
	// client leaves first hears OnJobGone instead.
	OnJobWritten func(owner any)
	// OnJobReadable is called on the loop thread, under the job's lock as
	// OnJobGone is, when a job whose TryRead came back pending has body
	// bytes, the body's end or an error to read: the reader may try again.
	OnJobReadable func(owner any)
	// OnLoopResponse, when set, is called on the loop thread for each
	// response the loop answers itself rather than a handler: a malformed
	// or oversized request (400, 413, 414, 431, ...), a head that timed
	// out (408), a deferral with nowhere to go (500). req is the request
	// answered, or nil when its head could not be parsed; it is valid only
	// during the call. body is the response body's length. An access log
	// records these with the handlers' own responses.
	OnLoopResponse func(remote netip.AddrPort, req *http1.Request, status int, body int)
	// MaxKeepAliveRequests, when positive, closes an HTTP/1.1 connection
	// after its response to that many requests (Connection: close on the
	// last): a client spread over the workers again, memory a long
	// connection pinned let go.
	MaxKeepAliveRequests int
	// PassOn, when set, is called on the loop thread for each connection
	// accepted, with the loop's deferred requests out (queued or in a
	// handler): true says the connection was given to another process
	// (and its descriptor closed here), which a worker among siblings does
	// when every one of its handler threads is taken (package
	// workerproto's handoff). What another process passes here comes in
	// through Adopt.
	PassOn func(fd int, jobsOut int) bool
	// Heartbeat, when set, is stamped with the wall clock (unix
	// nanoseconds) by the loop thread when it starts and at least once a
	// second while it runs: a supervisor reading it sees a loop that
	// stopped turning.
	Heartbeat *atomic.Int64

	// TLS, when set, terminates TLS on every connection (tls.go).
	TLS *tlsrec.Server
	// HTTP2, when set, serves HTTP/2 beside HTTP/1.1 (http2.go): h2c by
	// prior knowledge on a cleartext port, h2 where TLS's ALPN chose it.
	HTTP2 *HTTP2Config

	// WebSocket is the policy for upgraded connections (websocket.go).
	WebSocket WebSocketConfig
	// RequestTimeout, when positive, bounds how long a deferred job may
	// go without its handler starting a response: past it the loop
	// answers 504 and closes the connection (the handler's own response
	// goes nowhere), checked once a second. OnRequestTimeout is called
	// first, on the loop thread, with the job (valid during the call).
	RequestTimeout   time.Duration
	OnRequestTimeout func(j *Job)
}

// Defaults.
const (
	DefaultMaxConnections   = 10000
	DefaultHeaderTimeout    = 30 * time.Second
	DefaultKeepAliveTimeout = 5 * time.Second
	DefaultBodyTimeout      = 30 * time.Second
	DefaultSendTimeout      = 60 * time.Second
	DefaultMaxBodySize      = 1 << 30
)

func (c *Config) applyDefaults() error {
	if c.NewBackend == nil {
		return errors.New("loop: Config.NewBackend is nil")
	}
	if c.Handler == nil {
		return errors.New("loop: Config.Handler is nil")
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.MaxConnections < 1 {
		return fmt.Errorf("loop: MaxConnections %d: must be at least 1", c.MaxConnections)
	}
	if c.BodyMinRate < 0 {
		return fmt.Errorf("loop: BodyMinRate %d: must not be negative", c.BodyMinRate)
	}
	if c.MaxConnectionsPerIP < 0 {
		return fmt.Errorf("loop: MaxConnectionsPerIP %d: must not be negative", c.MaxConnectionsPerIP)
	}
	if c.HeaderTimeout == 0 {
		c.HeaderTimeout = DefaultHeaderTimeout
	}
	if c.KeepAliveTimeout == 0 {
		c.KeepAliveTimeout = DefaultKeepAliveTimeout
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.SendTimeout == 0 {
		c.SendTimeout = DefaultSendTimeout
	}
	if c.MaxBodySize == 0 {
		c.MaxBodySize = DefaultMaxBodySize
	}
	if c.Limits.MaxHeadBytes <= 0 {
		c.Limits.MaxHeadBytes = http1.DefaultLimits.MaxHeadBytes
	}
	if c.Limits.MaxFields <= 0 {
		c.Limits.MaxFields = http1.DefaultLimits.MaxFields
	}
	c.WebSocket.applyDefaults()
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return nil
}
