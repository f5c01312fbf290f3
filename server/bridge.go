package server

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/internal/workerproto"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
	"golang.org/x/sys/unix"
)

// bridgeJob adapts one deferred loop job to the bridge: the bridge's Job
// reads the body from the loop job and streams through bridgeJob (its
// BodyWriter). bridgeJobs are reused, each with its response arena, so a
// request allocates nothing once the pool has grown to what is in flight.
type bridgeJob struct {
	job      pybridge.Job
	loopJob  *loop.Job
	pool     *bridgePool
	remote   []byte // RemoteAddr's text, reused
	sent     int64  // body bytes written, for the access log
	logLine  []byte // the access-log line, reused
	logEntry accessEntry
	record   int // in the worker's table of requests in flight, or -1
	// taken: when the app's side took it, or for a WSGI batch's later
	// jobs when the one before ended (zero: metrics off); next: the job
	// after it in its handler thread's batch.
	taken time.Time
	next  *bridgeJob
	// handedOff is when a handler thread took the job, for the inline
	// policy's service time (zero without one).
	handedOff time.Time
	// gone: the client left; inputEnded: it ended its side (ASGI only;
	// see jobGone), set by the loop thread and read as the executor
	// starts the job.
	gone, inputEnded atomic.Bool
}

// bridgePool is the bridge's JobSource over the loop's JobQueue and its
// Completer: it wraps each loop job on the way in and finishes it per
// Outcome on the way out. WSGI handler threads and the ASGI executor
// share it: jobs, outcomes and writer are the same for both (an empty
// ASGI reason is fine: the loop writes the status line's reason from the
// status).
type bridgePool struct {
	queue     *loop.JobQueue
	app       *pybridge.App
	accessLog bool
	logFormat *accessFormat
	proxy     *proxyTrust // --proxy-headers; nil: off
	logf      func(format string, args ...any)
	// mounts, with --mount, picks each job's app by its path.
	mounts mountTable
	// inApp counts the jobs between wrap and put for the handoff's board
	// (nil: no board): a sibling passes connections here while it is
	// under the handler threads.
	inApp *atomic.Int32
	// inFlight names what is in the app for the master (nil: no master).
	inFlight *workerproto.InFlight
	// stats counts the time spent with the app (nil: metrics off).
	stats *AppStats
	// inline learns the app's service time from handed-off requests too
	// (--wsgi-inline auto; nil: off).
	inline *inlinePolicy

	// asgi: the pool feeds the ASGI executor, which hears of a closed
	// connection through jobGone (set before the executor starts; the
	// executor once it has).
	asgi     bool
	executor *pybridge.ASGIExecutor
	// handlers hear of WSGI jobs waiting on their clients (clientwait.go);
	// nil: no spare threads.
	handlers *pybridge.Handlers
	// realtime: a response may hold its connection (--realtime; hold.go).
	realtime bool

	mu   sync.Mutex
	free []*bridgeJob
	// spare arenas, given back by jobs that took over a response the
	// loop thread began (wrap), for the loop thread's next one.
	spare []*pybridge.Response

	// warnedHopByHop: the app's dropped hop-by-hop field was logged
	// (once per app: the app sets it on every response).
	warnedHopByHop atomic.Bool
}

func newBridgePool(queue *loop.JobQueue, app *pybridge.App, accessLog bool, logf func(string, ...any)) *bridgePool {
	return &bridgePool{queue: queue, app: app, accessLog: accessLog, logf: logf}
}

func (p *bridgePool) get() *bridgeJob {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		w := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return w
	}
	p.mu.Unlock()
	w := &bridgeJob{pool: p, remote: make([]byte, 0, 64), record: -1}
	w.job.App = p.app
	w.job.Response = pybridge.NewResponse()
	w.job.Writer = w
	// A Complete body is written to the loop job while the GIL is held:
	// it must fit the job's outbox without blocking.
	w.job.BufferLimit = pybridge.DefaultBufferLimit
	return w
}

func (p *bridgePool) put(w *bridgeJob) {
	if p.stats != nil {
		// A handler thread serves its batch in order: this job's end is
		// the next one's start, one clock reading for both.
		ended := p.stats.Served(w.taken)
		if w.next != nil {
			w.next.taken, w.next = ended, nil
		}
	}
	p.inFlight.Release(w.record)
	w.record = -1
	if p.inApp != nil {
		p.inApp.Add(-1)
	}
	w.loopJob = nil
	p.mu.Lock()
	p.free = append(p.free, w)
	p.mu.Unlock()
}

// wrap fills a bridge job from the loop job.
func (p *bridgePool) wrap(lj *loop.Job) *pybridge.Job {
	w := p.get()
	w.loopJob = lj
	if p.inApp != nil {
		p.inApp.Add(1)
	}
	if p.mounts != nil {
		w.job.App = p.mounts.route(lj.Request.Bytes(lj.Request.Path))
	}
	w.sent = 0
	w.record = p.inFlight.Claim(lj.Request.Bytes(lj.Request.Method), lj.Request.Bytes(lj.Request.Target))
	w.taken, w.next = p.stats.Start(), nil
	r := &w.job.Request
	r.FromHTTP1(&lj.Request, lj.Head)
	w.remote, r.RemotePort, r.Scheme = p.proxy.client(w.remote, lj.RemoteAddr, &lj.Request.Header)
	r.RemoteAddr = w.remote
	r.TLS = lj.TLS
	r.WebSocket = lj.IsWebSocket()
	if p.inline != nil {
		w.handedOff = time.Now()
	}
	w.job.Resume = false
	if resp, ok := lj.Carried.(*pybridge.Response); ok {
		// A response the loop thread began (inlineWSGI): this job goes
		// on with it, and its own arena becomes the loop thread's spare.
		lj.Carried = nil
		p.putSpare(w.job.Response)
		w.job.Response, w.job.Resume = resp, true
	}
	w.job.Body = nil
	if lj.Request.HasBody() {
		w.job.Body = lj
	}
	if p.handlers != nil {
		lj.SetClientWaiter(w)
	}
	if p.asgi {
		how := lj.SetOwner(w)
		w.gone.Store(how == loop.ConnectionClosed)
		w.inputEnded.Store(how == loop.InputEnded)
	}
	return &w.job
}

// maxSpare bounds the spare arenas kept: one per response handed over
// at once is plenty, and each may hold up to 1 MiB.
const maxSpare = 4

func (p *bridgePool) putSpare(r *pybridge.Response) {
	r.Release()
	p.mu.Lock()
	if len(p.spare) < maxSpare {
		p.spare = append(p.spare, r)
		r = nil
	}
	p.mu.Unlock()
	if r != nil {
		r.Free()
	}
}

// spareResponse is an arena for the loop thread, whose own went to a
// handler thread.
func (p *bridgePool) spareResponse() *pybridge.Response {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.spare); n > 0 {
		r := p.spare[n-1]
		p.spare[n-1] = nil
		p.spare = p.spare[:n-1]
		return r
	}
	return pybridge.NewResponse()
}

// TryTake implements pybridge.JobSource.
func (p *bridgePool) TryTake(dst []*pybridge.Job) int {
	n := 0
	for n < len(dst) {
		lj := p.queue.TryTake()
		if lj == nil {
			break
		}
		dst[n] = p.wrap(lj)
		n++
	}
	p.chain(dst[:n])
	return n
}

// chain links a WSGI handler thread's batch for the busy time: the jobs
// run one after another, each from the end of the one before (counting
// each from the batch's take would count the wait behind the others).
// ASGI's jobs run at once.
func (p *bridgePool) chain(batch []*pybridge.Job) {
	if p.stats == nil || p.asgi {
		return
	}
	for i := 1; i < len(batch); i++ {
		prev, w := batch[i-1].Writer.(*bridgeJob), batch[i].Writer.(*bridgeJob)
		prev.next, w.taken = w, time.Time{}
	}
}

// Take implements pybridge.JobSource: it blocks for one job, then takes
// whatever else is ready, so one wake carries a batch.
func (p *bridgePool) Take(dst []*pybridge.Job) int {
	if len(dst) == 0 {
		return 0
	}
	lj := p.queue.Take()
	if lj == nil {
		return 0
	}
	dst[0] = p.wrap(lj)
	n := 1 + p.TryTake(dst[1:])
	p.chain(dst[:min(n, 2)]) // TryTake chained the rest
	return n
}

// Wait implements pybridge.WaitSource.
func (p *bridgePool) Wait() bool { return p.queue.Wait() }

// SetNotify implements pybridge.NotifySource (the ASGI executor's).
func (p *bridgePool) SetNotify(notify func()) { p.queue.SetNotify(notify) }

// Arm implements pybridge.NotifySource.
func (p *bridgePool) Arm() bool { return p.queue.Arm() }

// Closed implements pybridge.NotifySource.
func (p *bridgePool) Closed() bool { return p.queue.Closed() }

// Complete implements pybridge.Completer. It runs with the GIL held, and
// for a driven ASGI executor on the loop thread, so nothing here blocks:
// a Complete body is posted whole (WriteWhole; the bridge keeps it within
// BufferLimit), and a file body is handed to the loop (sendFile).
func (p *bridgePool) Complete(j *pybridge.Job) {
	w := j.Writer.(*bridgeJob)
	lj := w.loopJob
	resp := j.Response
	if p.inline != nil {
		p.inline.observe(time.Since(w.handedOff))
	}
	if j.BodyErr != nil && p.logf != nil {
		p.logf("m0serve: debug: reading the request body: %v", j.BodyErr)
	}
	// The loop job is the loop's again after Finish or Abort: log first.
	switch resp.Outcome() {
	case pybridge.Upgraded:
		// The loop job ended with the accept (AcceptWebSocket logged
		// it): the connection is the WebSocket's.
	case pybridge.Complete:
		if w.holdWebSocket(resp) {
			// The accept ended the loop job: its connection is the
			// WebSocket's.
			w.logAccess(101)
			break
		}
		if fd, offset, length, ok := resp.TakeFile(); ok {
			w.sendFile(fd, offset, length)
			return
		}
		if err := w.WriteHead(resp); err == nil && !lj.Request.MethodIs("HEAD") {
			// WriteWhole, not Write: this may run on the loop thread
			// (--asgi-thread loop), where waiting for the outbox to drain
			// waits for itself.
			if n, _ := lj.WriteWhole(resp.Body()); n > 0 {
				w.sent += int64(n)
			}
		}
		w.logAccess(resp.Status())
		lj.Finish()
	case pybridge.Streamed:
		w.logAccess(resp.Status())
		lj.Finish()
	default:
		// The head went out (or the client left): no valid end.
		status := resp.Status()
		if status == 0 {
			// The client left before the head: nginx's 499 ("client
			// closed request"), not a 500 nobody was sent.
			status = 499
		}
		w.logAccess(status)
		lj.Abort()
	}
	p.put(w)
}

// WriteHead implements pybridge.BodyWriter: the app's status and fields go
// to the loop job, and the app's Content-Length (or the bridge's count of
// a list body) becomes the framing. The fields the loop frames with are
// dropped from the app's: two framings would be a smuggling vector.
func (w *bridgeJob) WriteHead(resp *pybridge.Response) error {
	lj := w.loopJob
	held := w.pool.realtime && w.hold(resp)
	for i := 0; i < resp.HeaderLen(); i++ {
		name, value := resp.Header(i)
		if http1.FramingField(name) || holdField(name) {
			continue
		}
		if err := lj.SetHeaderBytes(name, value); err != nil {
			return err
		}
	}
	w.pool.noteHopByHop(resp)
	if resp.Close() {
		if err := lj.SetClose(); err != nil {
			return err
		}
	}
	if held {
		return lj.WriteHeader(resp.Status(), -1)
	}
	return lj.WriteHeader(resp.Status(), framedLength(resp, lj.Request.MethodIs("HEAD")))
}

// Write implements pybridge.BodyWriter. It blocks while the client is
// slow; the bridge has released the GIL.
func (w *bridgeJob) Write(p []byte) (int, error) {
	n, err := w.loopJob.Write(p)
	w.sent += int64(n)
	return n, err
}

// Post implements pybridge.Port: an ASGI streamed piece, posted to
// the loop job without waiting, on the executor's thread or (driven) the
// loop thread. When it leaves the outbox full, jobWritten says when the
// loop has emptied it.
func (w *bridgeJob) Post(p []byte) (bool, error) {
	full, err := w.loopJob.Post(p)
	if err == nil {
		w.sent += int64(len(p))
	}
	return full, err
}

var _ pybridge.Port = (*bridgeJob)(nil)

// WriteTrailers implements pybridge.Port: ASGI
// http.response.trailers fields go after the chunked body's last chunk
// (the loop drops them when the response is not chunked). A field RFC 9110
// §6.5.1 keeps out of trailers (Content-Length, Content-Type, Set-Cookie,
// …) is dropped, as WriteHead drops the app's framing fields: the body has
// gone out well, and one misplaced field is no reason to break it.
func (w *bridgeJob) WriteTrailers(trailers *pybridge.Response) error {
	lj := w.loopJob
	for i := 0; i < trailers.HeaderLen(); i++ {
		name, value := trailers.Header(i)
		if err := lj.SetTrailerBytes(name, value); err != nil && !errors.Is(err, loop.ErrTrailerRefused) {
			return err
		}
	}
	return nil
}

// sendFile hands a wsgi.file_wrapper (or ASGI http.response.pathsend)
// body to the loop, which sends it from the page cache without copying it
// through user space (loop.Job.SendFile) and closes fd when done. The
// access log counts the announced length: once the job is the loop's, a
// short file or a client that left ends the connection instead. Nothing
// here blocks (SendFile returns at once), so it runs in Complete, with the
// GIL held; the loop's drain waits for the send, and Python is finalised
// only after the loop has ended.
func (w *bridgeJob) sendFile(fd int, offset, length int64) {
	p := w.pool
	lj := w.loopJob
	resp := w.job.Response
	if err := w.WriteHead(resp); err != nil || lj.Request.MethodIs("HEAD") {
		unix.Close(fd)
		w.logAccess(resp.Status())
		lj.Finish()
		p.put(w)
		return
	}
	// The loop job is the loop's after SendFile: log first.
	w.sent = length
	w.logAccess(resp.Status())
	if err := lj.SendFile(fd, offset, length); err != nil {
		// Nothing was taken: the client left before the file was handed
		// over.
		unix.Close(fd)
		lj.Abort()
	}
	p.put(w)
}

// noteHopByHop logs, once, a hop-by-hop field the app set and the bridge
// dropped: the app is told where its field went without a line per
// response.
func (p *bridgePool) noteHopByHop(resp *pybridge.Response) {
	name := resp.DroppedField()
	if name == nil || p.warnedHopByHop.Load() || !p.warnedHopByHop.CompareAndSwap(false, true) || p.logf == nil {
		return
	}
	p.logf("m0serve: warning: the app set the hop-by-hop response field %q: dropped, as are others like it "+
		"(the server owns the connection; only Connection: close is honoured); said once", name)
}

// framedLength is the Content-Length to announce: the app's own, or the
// bridge's count of the body (-1: unknown). For HEAD an empty count is
// no length: a framework drops the body of a HEAD response (Werkzeug
// returns none for a streamed one), so 0 is not what the GET would
// carry, and RFC 9110 §9.3.2 allows sending no length rather than a
// wrong one (as gunicorn does).
func framedLength(resp *pybridge.Response, head bool) int64 {
	if length := resp.AppContentLength(); length >= 0 {
		return length
	}
	length := resp.ContentLength()
	if head && length == 0 {
		return -1
	}
	return length
}
