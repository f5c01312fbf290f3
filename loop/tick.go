package loop

import (
	"runtime/debug"
	"time"
)

// tick runs once a second: the Date value and the deadline sweep. No timer
// syscall per request: each slot only stamps a deadline (a timerfd re-arm
// per request would cost a syscall each).
func (l *Loop) tick() {
	l.date.Tick(time.Unix(0, l.now))
	l.nextTick = l.now + int64(time.Second)
	l.stampHeartbeat()
	if l.cfg.RequestTimeout > 0 {
		l.timeOutJobs()
	}
	if limit := l.cfg.ClientWaitLimit; limit > 0 && int(l.clientWaits.Load()) >= limit {
		l.shedClientWaits()
	}
	if l.buffers.trim() {
		// Off the loop thread: it collects garbage and returns the
		// dropped buffers' pages at once, rather than minutes later.
		go debug.FreeOSMemory()
	}
	for _, s := range l.slots[1:] {
		if s == nil || !s.open || s.closing {
			continue
		}
		if s.ws != nil {
			l.wsTick(s.ws)
		}
		if s.h2 != nil {
			if l.tickHTTP2(s); s.closing {
				continue
			}
		}
		if l.checkSend(s); !s.closing && l.cfg.BodyMinRate > 0 {
			l.checkBodyRate(s)
		}
		if s.closing || s.deadline == 0 || l.now < s.deadline {
			continue
		}
		if s.deadlineKind == deadlineIdle && (s.sending || len(s.send) > 0) {
			// Not idle: a response is still going out to a client that
			// reads slowly, which --send-timeout (checkSend) judges. The
			// idle time counts from when it has gone.
			s.deadline = l.now + int64(l.cfg.KeepAliveTimeout)
			continue
		}
		if s.h2 != nil && s.deadlineKind == deadlineIdle {
			l.idleHTTP2(s)
			continue
		}
		switch s.deadlineKind {
		case deadlineHeader:
			if !s.sending && len(s.send) == 0 && len(s.input()) > 0 {
				l.answerError(s, nil, 408, "request header read timeout")
				l.touch(s)
			} else {
				l.closeSlot(s)
			}
		default:
			l.closeSlot(s)
		}
	}
}
