package wsclient

import (
	"testing"
	"time"
)

// TestBucketsCoverEveryValue: each value lands in the bucket whose
// bounds hold it, and buckets follow each other without gaps.
func TestBucketsCoverEveryValue(t *testing.T) {
	for _, v := range []uint64{0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 1000, 999_999, 1 << 40, 1<<63 + 12345} {
		low, high := bucketBounds(bucketOf(v))
		if v < low || v >= high && high != 0 {
			t.Errorf("value %d in bucket %d of bounds [%d, %d)", v, bucketOf(v), low, high)
		}
	}
	for i := 1; i < len(Histogram{}.counts)-1; i++ {
		_, previousHigh := bucketBounds(i - 1)
		if low, _ := bucketBounds(i); low != previousHigh {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, low, i-1, previousHigh)
		}
	}
}

// TestPercentiles: within the histogram's 1/32 precision.
func TestPercentiles(t *testing.T) {
	var h, other Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	other.Record(time.Second)
	h.Merge(&other)
	if h.Count() != 1001 {
		t.Fatalf("count %d, want 1001", h.Count())
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {1, time.Second}} {
		got := h.Percentile(tc.p)
		if got < tc.want-tc.want/32 || got > tc.want+tc.want/32 {
			t.Errorf("p%.0f = %v, want %v within 1/32", tc.p*100, got, tc.want)
		}
	}
	var empty Histogram
	if empty.Percentile(0.5) != 0 {
		t.Error("an empty histogram has a percentile")
	}
}
