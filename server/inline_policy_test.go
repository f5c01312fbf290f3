package server

import (
	"testing"
	"time"
)

// Each rule of --wsgi-inline auto, held and broken, from a warm policy
// whose app takes 90 µs (Flask's JSON row).
func TestInlinePolicyRules(t *testing.T) {
	warm := func() *inlinePolicy {
		p := &inlinePolicy{}
		for range inlineWarmup {
			p.observe(90 * time.Microsecond)
		}
		p.service.Store(int64(90 * time.Microsecond))
		return p
	}
	tests := []struct {
		name                string
		change              func(p *inlinePolicy)
		jobsInFlight, recvs int
		want                bool
	}{
		{"one connection", nil, 0, 1, true},
		{"a batch that fits the budget", nil, 0, 11, true},
		{"a batch past the budget goes whole", nil, 0, 12, false},
		{"no receive in the pass counts as one", nil, 0, 0, true},
		{"a deferred request in flight", nil, 1, 1, false},
		{"the pass's budget spent", func(p *inlinePolicy) { p.passSpent = inlineBudget }, 0, 1, false},
		{"the pass's budget nearly spent", func(p *inlinePolicy) { p.passSpent = inlineBudget - time.Microsecond }, 0, 1, true},
		{"a slow app", func(p *inlinePolicy) { p.service.Store(int64(inlineBudget)) }, 0, 1, false},
		{"not yet warm", func(p *inlinePolicy) { p.quick.Store(inlineWarmup - 1) }, 0, 1, false},
		{"a slow request restarts the warm-up", func(p *inlinePolicy) { p.observe(inlineWarmupSlow) }, 0, 1, false},
		{"turned off by a stall", func(p *inlinePolicy) { p.off = true }, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := warm()
			if tt.change != nil {
				tt.change(p)
			}
			if got := p.allows(tt.jobsInFlight, tt.recvs); got != tt.want {
				t.Errorf("allows(%d jobs, %d receives) = %v, want %v (service %v, spent %v)",
					tt.jobsInFlight, tt.recvs, got, tt.want, time.Duration(p.service.Load()), p.passSpent)
			}
		})
	}
}
