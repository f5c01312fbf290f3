package pybridge

// Inline serves WSGI jobs on a thread the caller owns (the server's loop
// thread, for --threads 0: bjoern's model), without a handoff: each Serve
// takes the GIL, runs the job in one cgo call and lets the GIL go. A job
// served here has no Writer and no Body: its response is buffered whole
// in Response, so nothing in Serve waits on the caller's own I/O.
type Inline struct {
	ip *Interpreter
	t  *thread
}

// AttachInline gives the calling OS thread a Python thread state for
// life. The goroutine must stay locked to its thread (runtime.LockOSThread)
// until Detach, which must run on the same thread. It returns without the
// GIL.
func (ip *Interpreter) AttachInline() (*Inline, error) {
	if err := ip.handlerStarted(); err != nil {
		return nil, err
	}
	t, err := attach()
	if err != nil {
		ip.handlerEnded()
		return nil, err
	}
	t.release()
	return &Inline{ip: ip, t: t}, nil
}

// Serve runs one job to its final response. j.Writer and j.Body must be
// nil: the response is buffered whole (Complete), up to j.GatherLimit;
// past it the response is Suspended, for a handler thread to Resume.
func (in *Inline) Serve(j *Job) {
	in.t.acquire()
	in.t.serve(j, partFull)
	in.t.release()
}

// Detach drops the thread state, on the thread that attached it.
func (in *Inline) Detach() {
	in.t.acquire()
	in.t.detach()
	in.ip.handlerEnded()
}
