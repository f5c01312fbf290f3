package loop

// ClientWaiter hears when a handler thread is about to block on its
// client and when the wait ends: Job.Read waiting for body bytes that
// have not arrived, Job.Write waiting for room in a full outbox. A pool
// of handler threads lets another thread run the app meanwhile, as Go's
// scheduler hands a P on from a thread blocked in a syscall. Both calls
// come on the handler's own thread; EndClientWait may block until the
// thread may run the app again.
type ClientWaiter interface {
	BeginClientWait()
	EndClientWait()
}

// SetClientWaiter registers the waiter told of the job's client waits.
// The handler calls it after taking the job, before Read or Write.
func (j *Job) SetClientWaiter(w ClientWaiter) { j.clientWaiter = w }

// waitClient waits on j.cond for the client, with j.mu held, telling the
// job's ClientWaiter. Only a wait that will block comes here, so a
// client keeping up costs nothing. j.mu is released while the waiter ends
// the wait: the loop needs it to go on draining the job meanwhile.
func (j *Job) waitClient() {
	w := j.clientWaiter
	if w == nil {
		j.cond.Wait()
		return
	}
	w.BeginClientWait()
	j.clientWaiting.Store(true)
	j.loop.clientWaits.Add(1)
	j.cond.Wait()
	j.loop.clientWaits.Add(-1)
	j.clientWaiting.Store(false)
	j.mu.Unlock()
	w.EndClientWait()
	j.mu.Lock()
}

// shedClientWaits runs on the tick when Config.ClientWaitLimit handler
// threads wait on their clients at once: every thread that may run the
// app is held by a client that does not read its response or send its
// body, and the requests behind them wait for one. It closes those
// clients' connections, as nginx's reset_timedout_connection cuts a
// client that stopped reading; a body
// still awaited is answered 408. Their threads' reads and writes fail
// and they go on to the requests queued. Below the limit a waiting
// client keeps its thread until --send-timeout or --body-min-rate.
//
// All of them, not the oldest few: against 200 reconnecting 1-byte/s
// uploaders (--threads 1, 64 spares), closing the older half each second
// answered 7 to 10 of 11 other requests within 20 s, closing those that
// arrived over a second before 8 to 10, closing all 11 (twice).
func (l *Loop) shedClientWaits() {
	waiting := l.shedScratch[:0]
	for _, s := range l.slots[1:] {
		if s != nil && s.open && !s.closing && s.job != nil && s.job.clientWaiting.Load() {
			waiting = append(waiting, s)
		}
	}
	l.shedScratch = waiting[:0]
	if len(waiting) == 0 {
		return
	}
	if times, ok := l.clientWaitsShed.allow(l.now); ok {
		l.cfg.Logf("m0serve: %d handler threads wait on slow clients (all that may run the app): their connections closed (%d times since the last report)",
			len(waiting), times)
	}
	for _, s := range waiting {
		j := s.job
		l.touch(s)
		if l.waitingOnBody(s) {
			j.mu.Lock()
			l.refuseBody(s, j, 408, "request body too slow", ErrBodyTooSlow)
			continue
		}
		l.closeSlot(s)
	}
	clear(waiting)
}
