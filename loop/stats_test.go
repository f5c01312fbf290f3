package loop

import (
	"strings"
	"testing"
)

// newStatsRig is newPassRig (one request per round, provided buffers)
// with Stats kept or not.
func newStatsRig(tb testing.TB, stats *Stats) *passRig {
	hs := newHarness(tb, plainHello, func(c *Config) { c.Stats = stats })
	hs.fb.provided = true
	c := hs.fb.dial()
	for !c.accepted {
		hs.l.pass()
	}
	r := &passRig{hs: hs, c: c, request: browserRequest}
	for i := 0; i < 100; i++ {
		r.round()
	}
	return r
}

func TestStatsCount(t *testing.T) {
	stats := &Stats{}
	r := newStatsRig(t, stats)
	if got := stats.Read().Responses[2]; got != 100 {
		t.Errorf("2xx: %d, want 100", got)
	}
	if got := stats.Read().Durations[0]; got != 100 {
		t.Errorf("first duration bucket: %d, want 100 (inline: 0)", got)
	}
	if got := stats.Read().Open; got != 1 {
		t.Errorf("open: %d, want 1", got)
	}
	if allocs := testing.AllocsPerRun(200, r.round); allocs != 0 {
		t.Errorf("%v allocations per request with Stats", allocs)
	}
	if out := r.hs.fb.output(r.c); !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") {
		t.Fatalf("rig is not serving: %q", out)
	}
}

// BenchmarkPassStats is the metrics' cost on the loop: a keep-alive
// request's pass without and with Stats (run with -count for an
// alternated comparison).
func BenchmarkPassStats(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "stats=off"
		var stats *Stats
		if on {
			name, stats = "stats=on", &Stats{}
		}
		b.Run(name, func(b *testing.B) {
			r := newStatsRig(b, stats)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r.round()
			}
		})
	}
}
