package loop

// timeOutJobs answers 504 for every job handed off longer ago than
// Config.RequestTimeout whose handler has not begun a response: a
// request stuck in the app (an endless loop, a call that never returns),
// or one queued behind it. A response already begun is the app's: its
// connection is left alone.
func (l *Loop) timeOutJobs() {
	limit := l.now - int64(l.cfg.RequestTimeout)
	for _, s := range l.slots[1:] {
		if s == nil || !s.open || s.closing || s.job == nil || s.job.Arrived > limit {
			continue
		}
		j := s.job
		j.mu.Lock()
		begun := j.headPosted || j.headWritten || j.finished
		j.mu.Unlock()
		if begun {
			continue
		}
		if l.cfg.OnRequestTimeout != nil {
			l.cfg.OnRequestTimeout(j)
		}
		l.answerError(s, &j.Request, 504, "request timeout") // detaches the job
		l.touch(s)
	}
}
