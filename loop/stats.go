package loop

import (
	"time"

	"github.com/m0serve/m0serve/internal/counters"
)

// Stats are the counters the loop keeps for the metrics: responses by
// status class, their durations, 503s under LimitConcurrency, and the
// open connections and requests in flight as of the last pass. The loop
// thread is the only writer. Their layout is package counters' words, so
// that a worker's can live in the heartbeat file its master maps
// (convert a *counters.Words to a *Stats).
type Stats counters.Words

// Read takes a reading of the counters (zero on a nil Stats).
func (s *Stats) Read() counters.Loop { return (*counters.Words)(s).Read() }

func (s *Stats) observe(d time.Duration) { (*counters.Words)(s).Observe(d) }

func (s *Stats) gauges(open, inFlight int) { (*counters.Words)(s).SetGauges(open, inFlight) }

func (s *Stats) response(status int) { (*counters.Words)(s).Response(status) }

func (s *Stats) overloaded() { (*counters.Words)(s).Overloaded() }
