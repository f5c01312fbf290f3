package server

import (
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// The handoff's rescue. A worker among siblings whose loop thread runs a
// quick WSGI request itself (--wsgi-inline auto) accepts nothing while it
// is in the app; what its socket queues meanwhile waits for the request
// to end, and a request that waits on a connection to its own server
// would wait on itself. So while the loop has been in the app for
// rescueAfter, a goroutine accepts from the socket and passes what it
// takes to a sibling with a handler free, or parks it until one is free
// there or here (handoff_park.go). io_uring's armed accept does not take a
// connection first: with DEFER_TASKRUN its accept runs only when the
// loop next enters the ring, which finds the queue empty and waits on.
//
// Handing every request to the handler thread instead costs 1.4x the
// server CPU per request of bare WSGI at 16 connections (bench/README.md,
// "Handoff"); the rescue's ticker costs a wake-up every rescueEvery.

// rescueAfter is how long the loop may be in the app before the rescue
// accepts: longer than the quick requests inlining takes (under a
// millisecond), short beside a request's own timeouts. rescueEvery is
// how often it looks: each look is a wake-up of an idle worker.
const (
	rescueAfter = 10 * time.Millisecond
	rescueEvery = 20 * time.Millisecond
)

// rescue starts the rescue for the inline policy's loop, and returns
// what stops it; nil when there is nothing to rescue (no siblings, or no
// inline requests).
func (w *Worker) rescue(policy *inlinePolicy, listenFD int, l *loop.Loop) (stop func()) {
	if policy == nil || !w.passesOn() {
		return nil
	}
	done := make(chan struct{})
	go w.handoff.rescue(policy, listenFD, l, done)
	return func() { close(done) }
}

func (h *handoff) rescue(policy *inlinePolicy, listenFD int, l *loop.Loop, done <-chan struct{}) {
	tick := time.NewTicker(rescueEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			since := policy.inAppSince.Load()
			if !policy.inApp.Load() || now.UnixNano()-since < int64(rescueAfter) {
				continue
			}
			for {
				fd, errno := acceptNonblock(listenFD)
				if errno == unix.EINTR || errno == unix.ECONNABORTED {
					continue
				}
				if errno != 0 {
					break // EAGAIN: nothing queued
				}
				if !h.passToFree(fd) {
					h.park(fd)
				}
			}
		}
	}
}
