package wsclient

import (
	"math/bits"
	"time"
)

// subBucketBits sets the histogram's precision: 2^5 linear sub-buckets
// per power of two, so a percentile is within about 3% of the truth.
const subBucketBits = 5

// Histogram counts durations in log-linear nanosecond buckets: fixed
// size, no allocation per sample, and histograms of several connections
// merge by adding.
type Histogram struct {
	counts [64 << subBucketBits]uint64
	total  uint64
}

// Record counts one duration.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.total++
}

// Merge adds other's counts to h.
func (h *Histogram) Merge(other *Histogram) {
	for i, n := range other.counts {
		h.counts[i] += n
	}
	h.total += other.total
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.total }

// Percentile is the duration below which fraction p (0 to 1) of the
// samples fall, as the middle of its bucket; 0 when there are none.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(p*float64(h.total) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, n := range h.counts {
		seen += n
		if seen >= rank {
			low, high := bucketBounds(i)
			return time.Duration(low + (high-low)/2)
		}
	}
	return 0
}

// bucketOf maps a value to its bucket: values under 2^subBucketBits
// have a bucket each; above, each power of two is cut into
// 2^subBucketBits equal buckets.
func bucketOf(v uint64) int {
	if v < 1<<subBucketBits {
		return int(v)
	}
	shift := bits.Len64(v) - subBucketBits - 1 // v>>shift is in [32, 64)
	return (shift+1)<<subBucketBits + int(v>>shift) - 1<<subBucketBits
}

// bucketBounds is the range [low, high) of values in bucket i.
func bucketBounds(i int) (low, high uint64) {
	if i < 1<<subBucketBits {
		return uint64(i), uint64(i) + 1
	}
	shift := i>>subBucketBits - 1
	mantissa := uint64(i&(1<<subBucketBits-1)) + 1<<subBucketBits
	return mantissa << shift, (mantissa + 1) << shift
}
