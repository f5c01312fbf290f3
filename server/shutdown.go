package server

import (
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// watchdogSlack is how long past the shutdown deadline the loop may still
// be running before the process exits regardless: only a loop thread held
// in the app (--threads 0 runs the app on it) cannot end the drain by
// itself; otherwise the loop closes what is left at the deadline and
// ends, and Python's stop is out of budget then.
const watchdogSlack = 500 * time.Millisecond

// forcedExitWait bounds how long a second signal waits for the loop to
// close the connections still busy (and log the requests it cuts off)
// before the process exits.
const forcedExitWait = time.Second

// stopper carries one shutdown through: SIGTERM and SIGINT, the deadline
// computed once at the first of them (one --graceful-timeout budget for
// the loop's drain and Python's stop together), and the exit at once on
// the second.
type stopper struct {
	loop    *loop.Loop
	grace   time.Duration
	logf    func(string, ...any)
	signals chan os.Signal
	// listenFD is the listening socket when it is this process's alone
	// (no master holds it for other workers), else -1.
	listenFD int
	// stoppedAccepting runs once the loop will not accept again (a
	// worker tells its master, which ends the shared socket's listening).
	stoppedAccepting func()
	// masterSays gives why a worker's master wants it shut down (it
	// stops, or it is gone): a drain, as a first signal is, but never the
	// second (nil: never).
	masterSays <-chan string

	once     sync.Once
	deadline time.Time

	forced   chan struct{} // closed at the second signal
	forceSig syscall.Signal
	ended    chan struct{} // closed once the loop has returned

	mu       sync.Mutex
	watchdog *time.Timer
	returned bool // Run has returned: no watchdog any more
}

func newStopper(l *loop.Loop, grace time.Duration, logf func(string, ...any)) *stopper {
	return &stopper{
		loop:     l,
		grace:    grace,
		logf:     logf,
		signals:  make(chan os.Signal, 3),
		listenFD: -1,
		forced:   make(chan struct{}),
		ended:    make(chan struct{}),
	}
}

// begin fixes the deadline, at the first signal or, when the loop ended
// without one, as Python's stop begins.
func (s *stopper) begin() *stopper {
	s.once.Do(func() { s.deadline = time.Now().Add(s.grace) })
	return s
}

// run handles the signals: the first drains, the second exits. The
// master's word (masterSays) drains as a first signal does, but is not
// one: two signals still exit.
func (s *stopper) run() {
	var why any
	told := false
	select {
	case why = <-s.signals:
	case why = <-s.masterSays:
		told = true
	}
	s.begin()
	s.logf("m0serve: %v: draining (up to %v)", why, s.grace)
	s.loop.Shutdown(time.Until(s.deadline))
	s.stopListening()
	if s.stoppedAccepting != nil {
		s.stoppedAccepting()
	}
	s.mu.Lock()
	if !s.returned {
		s.watchdog = time.AfterFunc(time.Until(s.deadline)+watchdogSlack, func() {
			select {
			case <-s.ended:
				return // Python's stop is bounded by the deadline itself
			default:
			}
			// Status 0, as when the deadline cuts requests off on a
			// loop that could drain: the shutdown asked for is done.
			s.logf("m0serve: warning: the I/O thread is still busy %v past the shutdown deadline (an app running on it?): exiting", watchdogSlack)
			os.Exit(0)
		})
	}
	s.mu.Unlock()

	sig := <-s.signals
	if told {
		// The master's word is not a signal: the operator's first one
		// (systemd's KillMode=control-group signals every process, the
		// master's word may come first) finds the drain under way; only a
		// second exits.
		s.logf("m0serve: %v: already draining", sig)
		sig = <-s.signals
	}
	s.logf("m0serve: warning: %v again: exiting now", sig)
	s.forceSig, _ = sig.(syscall.Signal)
	close(s.forced)
	s.loop.Shutdown(0)
	select {
	case <-s.ended:
	case <-time.After(forcedExitWait):
	}
	s.exitNow()
}

// stopListening makes the kernel refuse new connections from the first
// signal on. The loop stops accepting as it begins to drain, but an open
// listening socket goes on completing handshakes into its backlog, and
// those clients would wait for a response that never comes, then be reset
// at exit. shutdown(SHUT_RD) on a listening socket ends its listening on
// Linux (the queued connections are reset, as a close does) at once, from
// this goroutine: the loop thread may be in the app (--threads 0), and an
// io_uring multishot accept holding the file would keep a closed socket
// listening. The descriptor stays open until Run returns. The loop has
// been told to shut down first, so the accept that now fails is not
// armed again.
func (s *stopper) stopListening() {
	if s.listenFD < 0 {
		return
	}
	// ENOTCONN: a BSD kernel, where a listening socket cannot be shut
	// down; it stays open until exit, as before.
	if err := unix.Shutdown(s.listenFD, unix.SHUT_RD); err != nil && err != unix.ENOTCONN {
		s.logf("m0serve: warning: closing the listening socket: %v", err)
	}
}

// loopEnded: the loop's Run has returned.
func (s *stopper) loopEnded() {
	close(s.ended)
	s.begin()
}

// runReturned stops the watchdog: Run is returning to its caller, which
// exits.
func (s *stopper) runReturned() {
	s.mu.Lock()
	s.returned = true
	if s.watchdog != nil {
		s.watchdog.Stop()
	}
	s.mu.Unlock()
}

// exitNow ends the process after a second signal, with what a shell
// reports for a process that signal killed (130 for SIGINT, 143 for
// SIGTERM). Python is not finalised: it may be anywhere in the app.
func (s *stopper) exitNow() {
	os.Exit(128 + int(s.forceSig))
}
