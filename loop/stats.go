package loop

import (
	"sync/atomic"
	"time"
)

// DurationBounds are the upper bounds of the request-duration buckets
// (Prometheus' default buckets); Stats.Durations has one more, +Inf.
var DurationBounds = [...]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

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
	// Durations counts handlers' responses by the time from the head's
	// arrival to the response head (bucket i: up to DurationBounds[i];
	// the last: beyond); DurationSum is their total in nanoseconds. An
	// inline handler answers within the pass: 0.
	Durations   [len(DurationBounds) + 1]atomic.Int64
	DurationSum atomic.Int64
	// Overloaded counts requests answered 503 under LimitConcurrency.
	Overloaded atomic.Int64
}

func (s *Stats) observe(d time.Duration) {
	if s == nil {
		return
	}
	i := 0
	for i < len(DurationBounds) && d > DurationBounds[i] {
		i++
	}
	s.Durations[i].Add(1)
	if d > 0 {
		s.DurationSum.Add(int64(d))
	}
}

// gauges publishes the loop's gauges; a store (a locked instruction) only
// when one changed.
func (s *Stats) gauges(open, inFlight int) {
	if s.Open.Load() != int64(open) {
		s.Open.Store(int64(open))
	}
	if s.InFlight.Load() != int64(inFlight) {
		s.InFlight.Store(int64(inFlight))
	}
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

func (s *Stats) overloaded() {
	if s != nil {
		s.Overloaded.Add(1)
	}
}
