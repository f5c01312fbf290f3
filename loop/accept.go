package loop

import (
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func (l *Loop) onAccept(c *Completion) {
	if !c.More {
		l.accepting = false
	}
	if c.Res < 0 {
		errno := syscall.Errno(-c.Res)
		if errno == syscall.EMFILE || errno == syscall.ENFILE || errno == syscall.ENOBUFS || errno == syscall.ENOMEM {
			l.pauseAccept(errno)
			return
		}
		if !l.accepting && !l.acceptStopped && !l.draining {
			l.backend.QueueAccept(l.cfg.ListenFD)
			l.accepting = true
		}
		return
	}
	fd := int(c.Res)
	if l.acceptBackoff != 0 {
		l.acceptBackoff, l.acceptRetryAt = 0, 0
		l.cfg.Logf("m0serve: accepting connections again")
	}
	if l.draining && !l.gentleDrain {
		unix.Close(fd)
		return
	}
	if l.cfg.PassOn != nil && l.cfg.PassOn(fd, l.jobsOut) {
		l.rearmAccept()
		return
	}
	if !l.open(fd) {
		l.rearmAccept()
		return
	}
	l.acceptOrPause()
}

// open makes an accepted (or adopted) connection a slot, unless the
// client's address is over its limit.
func (l *Loop) open(fd int) bool {
	var peer netip.AddrPort
	var counted bool
	if l.cfg.MaxConnectionsPerIP > 0 {
		var admitted bool
		if peer, counted, admitted = l.admitPerIP(fd); !admitted {
			return false
		}
	}
	// Responses leave in one send each; Nagle would only hold one back
	// behind the previous one's ACK (bench/README.md, Figures behind the
	// comments).
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	s := l.newSlot(fd)
	if l.cfg.TLS != nil {
		l.newTLS(s)
	}
	if counted {
		s.remote, s.remoteKnown, s.countedPerIP = peer, true, true
	}
	s.deadline, s.deadlineKind = l.now+int64(l.cfg.HeaderTimeout), deadlineHeader
	s.recvWanted = true
	l.touch(s)
	return true
}

// acceptOrPause arms the next accept, or stops accepting at
// --max-connections.
func (l *Loop) acceptOrPause() {
	if l.active >= l.cfg.MaxConnections {
		if n, ok := l.atLimit.allow(l.now); ok {
			l.cfg.Logf("m0serve: %d connections open, the --max-connections limit: new connections wait in the listen backlog (hit %d times since the last report)", l.active, n)
		}
		l.stopAccept()
	} else {
		l.rearmAccept()
	}
}

// rearmAccept queues the next accept unless one is armed or accepting is
// stopped.
func (l *Loop) rearmAccept() {
	if !l.accepting && !l.acceptStopped {
		l.backend.QueueAccept(l.cfg.ListenFD)
		l.accepting = true
	}
}

func (l *Loop) stopAccept() {
	if l.accepting {
		l.backend.StopAccept()
		l.acceptStops++
		l.accepting = false
	}
	l.acceptStopped = true
}

// Accept's retry after running out of descriptors or memory: what
// net/http's Server.Serve waits, 5 ms doubling up to 1 s.
const (
	acceptRetryFirst = 5 * time.Millisecond
	acceptRetryMax   = time.Second
)

// pauseAccept stops accepting after errno (EMFILE and its kind): retrying
// at once would spin. Accept resumes when one of the loop's connections
// closes or on a timer, whichever comes first: the descriptors may be
// held elsewhere (the app's threads, a database pool), and a loop that
// waited only for its own connections could stay deaf for good. One line
// when it starts failing, one when it accepts again.
func (l *Loop) pauseAccept(errno syscall.Errno) {
	if l.acceptBackoff == 0 {
		l.acceptBackoff = acceptRetryFirst
		l.cfg.Logf("m0serve: accept: %v; accepting pauses, retried from every %v up to every %v until it succeeds", errno, acceptRetryFirst, acceptRetryMax)
	} else {
		l.acceptBackoff = min(2*l.acceptBackoff, acceptRetryMax)
	}
	l.acceptRetryAt = l.now + int64(l.acceptBackoff)
	l.stopAccept()
}

func (l *Loop) resumeAccept() {
	if l.acceptStopped && !l.draining && l.active < l.cfg.MaxConnections {
		l.acceptStopped = false
		l.backend.QueueAccept(l.cfg.ListenFD)
		l.accepting = true
	}
}
