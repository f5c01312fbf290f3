package server

import (
	"sync/atomic"

	"github.com/m0serve/m0serve/internal/metrics"
	"github.com/m0serve/m0serve/internal/workerproto"
	"github.com/m0serve/m0serve/loop"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// AppStats are the handlers' counters for the metrics; in a worker they
// live in the heartbeat file (package workerproto).
type AppStats = workerproto.AppStats

// processMetrics is a single process's collector (no --workers): its
// own loop's and handlers' counters, read where they are kept.
type processMetrics struct {
	desc    *metrics.Requests
	stats   *loop.Stats
	app     *AppStats // nil: no Python app
	backend atomic.Pointer[string]
}

func (p *processMetrics) Describe(ch chan<- *prometheus.Desc) { p.desc.Describe(ch) }

func (p *processMetrics) Collect(ch chan<- prometheus.Metric) {
	var c metrics.Counters
	loopCounters := p.stats.Read()
	c.Add(&loopCounters, p.app)
	c.AddGauges(&loopCounters)
	var backends []string
	if name := p.backend.Load(); name != nil {
		backends = []string{*name}
	}
	p.desc.Collect(ch, &c, p.app != nil, backends)
}

// newProcessMetrics is the collector of this process's counters (stats
// and app: nil for new ones) and a registry holding it and the process's
// own (resident memory, CPU, descriptors, from client_golang's process
// collector).
func newProcessMetrics(cfg *Config, stats *loop.Stats, app *AppStats) (*processMetrics, *prometheus.Registry) {
	if stats == nil {
		stats = new(loop.Stats)
	}
	p := &processMetrics{desc: metrics.NewRequests(), stats: stats}
	if cfg.App != "" {
		p.app = app
		if p.app == nil {
			p.app = new(AppStats)
		}
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(p, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return p, registry
}
