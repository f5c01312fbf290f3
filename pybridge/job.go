package pybridge

import "time"

// Job is one request for a handler thread: what to call, with what, and
// where the response goes. The server owns jobs and reuses them; a job's
// fields must not change between handing it over and its completion.
type Job struct {
	App     *App
	Request Request
	// Body is the request body; nil when there is none.
	Body BodyReader
	// Writer takes a response whose body comes piece by piece; nil
	// buffers every response whole in Response.
	Writer BodyWriter
	// BufferLimit: with a Writer, a list body longer than this streams
	// through it too (its length known), so a Complete response never
	// holds more than the server can queue without blocking; Complete runs
	// with the GIL held. 0 means DefaultBufferLimit.
	BufferLimit int
	// GatherLimit: without a Writer, a body longer than this is not
	// gathered further: the Response is left Suspended, for a handler
	// thread to go on with (Resume). 0 gathers any size.
	GatherLimit int
	// GatherTime: without a Writer, a body still coming this long after
	// the call began is not gathered further either (Suspended): the
	// blocks an app yields slowly are not held back (PEP 3333), and the
	// caller's thread is not held. 0: no limit.
	GatherTime time.Duration
	// Resume: Response is one Inline.Serve left Suspended (or Complete,
	// with nothing left to run): the thread sends what it holds and the
	// rest of the app's iterable through the Writer, which it needs.
	Resume bool
	// Response receives the status, headers and (unless streamed) body.
	Response *Response
	// BodyErr is the BodyReader's error when a read failed (the app saw
	// an OSError), for the server's log.
	BodyErr error

	// slot is the ASGI request state while the job is in flight on an
	// executor (its thread's only).
	slot *asgiSlot
	// thread serves the job (a WSGI handler thread's own).
	thread *thread
}

// DefaultBufferLimit is the loop's response outbox (64 KiB).
const DefaultBufferLimit = 64 << 10

// JobSource is where handler threads take jobs from, in batches: a handler
// holds the GIL across a batch and releases it only to park.
type JobSource interface {
	// TryTake moves up to len(dst) ready jobs into dst without blocking
	// and returns how many.
	TryTake(dst []*Job) int
	// Take blocks until at least one job is ready, then moves up to
	// len(dst) into dst. It returns 0 once the source is closed and empty:
	// the handler thread then ends.
	Take(dst []*Job) int
}

// WaitSource is a JobSource whose takers can wait for a job without
// taking it: a handler thread waits without the interpreter lock, takes
// the lock, and only then takes one job. A job then never sits with a
// thread still waiting for the lock while another thread could run it.
type WaitSource interface {
	JobSource
	// Wait blocks until a job is ready; false once the source is closed
	// and empty.
	Wait() bool
}

// NotifySource is a JobSource whose taker may sleep in an event loop of
// its own rather than in Take: the ASGI executor, which watches a
// descriptor. After each Arm the source calls the function given to
// SetNotify once, when a job is next ready or the source closes.
type NotifySource interface {
	JobSource
	// SetNotify registers the notification before the first Arm; notify
	// must not block.
	SetNotify(notify func())
	// Arm asks for the notification. It returns false, arming nothing,
	// when a job is ready or the source is closed already.
	Arm() bool
	// Closed reports whether the source was closed.
	Closed() bool
}

// Completer receives each job when its response is final (any Outcome),
// in the order the thread took them. It is called with the GIL held, so
// it must not block: size the completion queue for every job in flight.
type Completer interface {
	Complete(j *Job)
}
