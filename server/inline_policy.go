package server

import (
	"sync/atomic"
	"time"

	"github.com/m0serve/m0serve/loop"
)

// inlinePolicy is --wsgi-inline auto: the loop thread runs a WSGI request
// itself when that costs nothing else, and hands it to a handler thread
// otherwise. At one connection the handoff's two thread wakes are most of
// what a request costs above the app; from 16 connections up each wake
// carries a batch and costs little (README.md, "Handler threads").
//
// A request runs inline only when all of these hold:
//   - it has no body (a body arrives through the loop, which is busy);
//   - no deferred request is in flight, so the app never runs on two
//     threads at once and the handler threads' batches are not split;
//   - the app's recent service time (an EWMA over inline and handed-off
//     requests alike) is under inlineBudget, and each of its last
//     inlineWarmup requests was under inlineWarmupSlow: an app starts
//     handed off, and a slow request hands it off again until it has
//     shown it is quick;
//   - the pass's requests (its receives, Request.PassReceives) at the
//     app's service time fit in inlineBudget: a batch bigger than that
//     goes to the handler thread whole, rather than split between the two
//     threads (a split batch costs more CPU than handing every request
//     off: bench/README.md, Figures behind the comments);
//   - the requests run inline in this pass of the loop took less than
//     inlineBudget together: the rest of a busy pass is handed off.
//
// So a pass of the loop spends at most inlineBudget plus one request in
// the app, for an app whose requests take what they recently took. A
// request that turns slow stalls the loop once, for its own duration;
// one over inlineStallLimit turns inlining off for good (and says so), so
// an app with long requests (long polls, slow upstreams) stalls it once
// in a worker's life at most. Meanwhile the worker's heartbeat is kept
// (keepHeartbeat): a long call on the loop thread does not get the worker
// killed by --worker-timeout, as one on a handler thread does not.
type inlinePolicy struct {
	// service is the EWMA of the app's service time in nanoseconds; the
	// loop thread and the handler threads update it (a lost update between
	// them is harmless).
	service atomic.Int64
	// passSpent is the app time spent inline in this pass (loop thread).
	passSpent time.Duration
	// quick counts the app's requests in a row under inlineWarmupSlow.
	quick atomic.Int64
	// inApp: the loop thread is in the app (keepHeartbeat reads it);
	// inAppSince: since when, unix ns (the handoff's rescue reads it).
	inApp      atomic.Bool
	inAppSince atomic.Int64
	// off: a request ran over inlineStallLimit (loop thread).
	off  bool
	logf func(string, ...any)
}

const (
	// inlineBudget bounds the app time one pass of the loop spends inline
	// and the service time of an app that is run inline at all: 1 ms is
	// ten Flask requests and costs another connection at most that much
	// latency, about one scheduler tick of a busy machine.
	inlineBudget = time.Millisecond
	// inlineStallLimit is the longest inline request tolerated: past it
	// the app is taken to have requests that wait (a database, the
	// network), which belong on handler threads.
	inlineStallLimit = 100 * time.Millisecond
	// inlineWarmup is how many requests in a row under inlineWarmupSlow
	// the app shows before the loop thread runs one: a few milliseconds
	// of traffic. Ten budgets, not one: a quick request the scheduler
	// preempted on a busy machine should not restart the count; the EWMA
	// keeps the budget itself.
	inlineWarmup     = 64
	inlineWarmupSlow = 10 * inlineBudget
)

// allow reports whether req may run on the loop thread now.
func (p *inlinePolicy) allow(req *loop.Request) bool {
	return !req.HasBody() && p.allows(req.JobsInFlight(), req.PassReceives())
}

// allows is allow's rule on what the loop reports of its pass.
func (p *inlinePolicy) allows(jobsInFlight, passReceives int) bool {
	service := time.Duration(p.service.Load())
	return !p.off && jobsInFlight == 0 && p.passSpent < inlineBudget &&
		p.quick.Load() >= inlineWarmup && time.Duration(max(1, passReceives))*service < inlineBudget
}

// ranInline records an inline request's service time (loop thread).
func (p *inlinePolicy) ranInline(d time.Duration) {
	p.passSpent += d
	p.observe(d)
	if d > inlineStallLimit && !p.off {
		p.off = true
		if p.logf != nil {
			p.logf("m0serve: warning: a request took %v on the I/O thread: WSGI requests go to the handler threads from now on "+
				"(--wsgi-inline off does so from the start)", d.Round(time.Millisecond))
		}
	}
}

// observe folds one request's service time into the EWMA (weight 1/8: a
// slow request lifts it at once, and eight or so quick ones bring it back
// under the budget).
func (p *inlinePolicy) observe(d time.Duration) {
	old := p.service.Load()
	p.service.Store(old + (int64(d)-old)/8)
	if d < inlineWarmupSlow {
		if p.quick.Load() < inlineWarmup {
			p.quick.Add(1)
		}
	} else {
		p.quick.Store(0)
	}
}

// keepHeartbeat stamps a worker's heartbeat every heartbeatKeep while the
// loop thread is in the app, until stop closes: the master's
// --worker-timeout watches for a loop that stopped turning, and a long
// request there is the app's, as on a handler thread
// (--request-timeout's to judge, which turns inlining off).
func (p *inlinePolicy) keepHeartbeat(stamp *atomic.Int64, stop <-chan struct{}) {
	tick := time.NewTicker(heartbeatKeep)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			if p.inApp.Load() {
				stamp.Store(now.UnixNano())
			}
		}
	}
}

// heartbeatKeep is under the loop's own stamping interval (a second).
const heartbeatKeep = 500 * time.Millisecond

// passEnded runs at the end of each pass of the loop (loop thread).
func (p *inlinePolicy) passEnded() { p.passSpent = 0 }
