package server

// A WSGI handler thread that blocks on its client (a body not yet sent, a
// response not read) lets a spare thread run the app meanwhile
// (pybridge's spare threads, --max-client-waits): the loop job tells the
// bridge job, which tells the handler threads which job waits.

// BeginClientWait implements loop.ClientWaiter.
func (w *bridgeJob) BeginClientWait() { w.pool.handlers.BeginClientWait(&w.job) }

// EndClientWait implements loop.ClientWaiter.
func (w *bridgeJob) EndClientWait() { w.pool.handlers.EndClientWait() }
