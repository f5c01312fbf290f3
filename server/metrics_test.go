package server

import (
	"testing"
)

func TestBackendLabels(t *testing.T) {
	for name, want := range map[string][2]string{
		"io_uring: single_issuer+defer_taskrun, multishot accept": {"io_uring", "single_issuer+defer_taskrun, multishot accept"},
		"epoll (edge-triggered, persistent interest)":             {"epoll", "edge-triggered, persistent interest"},
		"kqueue": {"kqueue", ""},
	} {
		if got := backendLabels(name); got != want {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}

// TestAppStatsAllocatesNothing: the handler's clock reading and count
// are on the request path.
func TestAppStatsAllocatesNothing(t *testing.T) {
	stats := &AppStats{}
	if allocs := testing.AllocsPerRun(1000, func() { stats.served(stats.start()) }); allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
	if stats.Busy.Load() <= 0 {
		t.Errorf("busy %d after 1001 requests", stats.Busy.Load())
	}
	var off *AppStats
	off.served(off.start()) // metrics off: nothing, no panic
}

// BenchmarkAppStats is the busy time's cost per request in the handler:
// two clock readings (vDSO) and an atomic add; off, nothing.
func BenchmarkAppStats(b *testing.B) {
	for _, stats := range []*AppStats{nil, {}} {
		name := "off"
		if stats != nil {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				stats.served(stats.start())
			}
		})
	}
}
