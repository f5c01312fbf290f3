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
	j.cond.Wait()
	j.mu.Unlock()
	w.EndClientWait()
	j.mu.Lock()
}
