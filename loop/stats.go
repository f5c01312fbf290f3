package loop

import "sync/atomic"

// Stats are counters the loop keeps for a supervisor's metrics. The loop
// thread is the only writer; they may live in memory another process maps
// (a worker's, read by its master), so reading them costs the loop no
// system call.
type Stats struct {
	// Responses counts response heads by status class: [1] 1xx to [5]
	// 5xx ([0]: anything else).
	Responses [6]atomic.Int64
	Open      atomic.Int64 // connections open, as of the last pass
	InFlight  atomic.Int64 // deferred requests in flight, as of the last pass
}

func (s *Stats) response(status int) {
	if s == nil {
		return
	}
	class := status / 100
	if class < 1 || class > 5 {
		class = 0
	}
	s.Responses[class].Add(1)
}
