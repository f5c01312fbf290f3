package server

// A WSGI handler thread that blocks on its client (a body not yet sent, a
// response not read) lets a spare thread run the app meanwhile
// (pybridge's spare threads, --max-client-waits): the loop job tells the
// bridge job, which tells the handler threads which job waits.

// clientWaitLimit is how many WSGI handler threads may wait on their
// clients before the loop closes their connections: every handler thread
// and spare (--threads, --max-client-waits). 0 without spares, where a
// waiting thread keeps its permit and --send-timeout alone bounds it.
func clientWaitLimit(cfg *Config, py *python) int {
	if py == nil || py.pool == nil || py.pool.handlers == nil {
		return 0
	}
	return max(1, cfg.Threads) + cfg.MaxClientWaits
}

// BeginClientWait implements loop.ClientWaiter.
func (w *bridgeJob) BeginClientWait() { w.pool.handlers.BeginClientWait(&w.job) }

// EndClientWait implements loop.ClientWaiter.
func (w *bridgeJob) EndClientWait() { w.pool.handlers.EndClientWait() }
