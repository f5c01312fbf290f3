// Package counters is the layout of a loop's counters, which three
// parties share: the loop counts into them (loop.Stats), a worker keeps
// them in the heartbeat file its master maps (internal/workerproto), and
// the metrics describe them (internal/metrics). It is defined here, as
// words in a stated order, so that the three agree and the master links
// no event loop.
package counters

import (
	"sync/atomic"
	"time"
)

// Bounds are the upper bounds of the request-duration buckets
// (Prometheus' default buckets); a histogram over them has one more,
// +Inf.
var Bounds = [...]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// Buckets is the number of buckets a histogram over Bounds has.
const Buckets = len(Bounds) + 1

// The words of Words, in order.
const (
	responsesWord   = 0                       // 6 words: by status class
	durationsWord   = 6                       // Buckets words
	durationSumWord = durationsWord + Buckets // nanoseconds
	overloadedWord  = durationSumWord + 1     // 503s under --limit-concurrency
	openWord        = overloadedWord + 1      // a gauge
	inFlightWord    = openWord + 1            // a gauge
	WordCount       = inFlightWord + 1        // the words Words takes, 8 bytes each
)

// Words are one loop's counters, an int64 word each in the order above.
// The loop thread is the only writer; a worker's live in its heartbeat
// file, so that its master reads them without asking the loop anything.
// Every method does nothing on a nil Words (counting is off).
type Words [WordCount]atomic.Int64

// Response counts a response head with status.
func (w *Words) Response(status int) {
	if w == nil {
		return
	}
	class := status / 100
	if class < 1 || class > 5 {
		class = 0
	}
	w[responsesWord+class].Add(1)
}

// Observe counts a handler's response by the time from the head's
// arrival to the response head (an inline handler's: 0).
func (w *Words) Observe(d time.Duration) {
	if w == nil {
		return
	}
	i := 0
	for i < len(Bounds) && d > Bounds[i] {
		i++
	}
	w[durationsWord+i].Add(1)
	if d > 0 {
		w[durationSumWord].Add(int64(d))
	}
}

// Overloaded counts a request answered 503 under --limit-concurrency.
func (w *Words) Overloaded() {
	if w != nil {
		w[overloadedWord].Add(1)
	}
}

// SetGauges publishes the connections open and the requests in flight; a
// store (a locked instruction) only when one changed.
func (w *Words) SetGauges(open, inFlight int) {
	if w == nil {
		return
	}
	if w[openWord].Load() != int64(open) {
		w[openWord].Store(int64(open))
	}
	if w[inFlightWord].Load() != int64(inFlight) {
		w[inFlightWord].Store(int64(inFlight))
	}
}

// Loop is a reading of one loop's counters.
type Loop struct {
	// Responses counts response heads by status class: [1] 1xx to [5]
	// 5xx ([0]: anything else).
	Responses [6]int64
	// Durations counts responses by the time from the head's arrival to
	// the response head (bucket i: up to Bounds[i]; the last: beyond);
	// DurationSum is their total in nanoseconds.
	Durations   [Buckets]int64
	DurationSum int64
	Overloaded  int64
	Open        int64 // connections open, as of the loop's last pass
	InFlight    int64 // requests handed to the app, as of the last pass
}

// Read takes a reading, a word at a time (a reader on another thread may
// see a response counted in Responses and not yet in Durations); zero on
// a nil Words.
func (w *Words) Read() Loop {
	var c Loop
	if w == nil {
		return c
	}
	for i := range c.Responses {
		c.Responses[i] = w[responsesWord+i].Load()
	}
	for i := range c.Durations {
		c.Durations[i] = w[durationsWord+i].Load()
	}
	c.DurationSum = w[durationSumWord].Load()
	c.Overloaded = w[overloadedWord].Load()
	c.Open = w[openWord].Load()
	c.InFlight = w[inFlightWord].Load()
	return c
}
