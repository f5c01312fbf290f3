package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/internal/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// spawnReason names why a worker was started, for the spawns metric.
func spawnReason(why string) string {
	switch {
	case why == "booting":
		return "boot"
	case strings.HasPrefix(why, "respawn"):
		return "crash"
	case why == "reload":
		return "reload"
	case why == "SIGTTIN":
		return "scale"
	case strings.Contains(why, "--max-requests"):
		return "max_requests"
	case strings.Contains(why, "--max-worker-rss"):
		return "max_rss"
	case strings.Contains(why, "--max-worker-lifetime"):
		return "lifetime"
	}
	return "other"
}

// exitReason names why a worker's process ended, for the exits metric.
func exitReason(w *worker) string {
	switch {
	case w.heartbeatKilled:
		return "timeout"
	case w.draining:
		return "drained"
	}
	return "crash"
}

// metricsSnapshot is the master's state as a scrape reads it, taken on
// the master's goroutine (the state is that goroutine's alone).
type metricsSnapshot struct {
	states   map[string]int
	spawns   map[string]int
	exits    map[string]int
	counters metrics.Counters
	rss      map[string]int64 // by slot
	backends []string         // the live workers' backend descriptions
	app      bool             // the workers serve a Python app
}

func (m *master) snapshot() metricsSnapshot {
	snap := metricsSnapshot{states: map[string]int{"booting": 0, "ready": 0, "draining": 0},
		spawns: map[string]int{}, exits: map[string]int{}, rss: map[string]int64{},
		counters: m.gone, app: m.cfg.Server.ServesApp()}
	for k, v := range m.spawnCounts {
		snap.spawns[k] = v
	}
	for k, v := range m.exitCounts {
		snap.exits[k] = v
	}
	pageSize := int64(os.Getpagesize())
	for w := range m.live {
		switch {
		case w.draining:
			snap.states["draining"]++
		case w.readyAt.IsZero():
			snap.states["booting"]++
		default:
			snap.states["ready"]++
		}
		loopCounters := w.stats.Read()
		snap.counters.Add(&loopCounters, w.appStats)
		snap.counters.AddGauges(&loopCounters)
		snap.backends = append(snap.backends, w.backend)
		if w == w.slot.current {
			if pages, err := residentPages(w.pid); err == nil {
				snap.rss[strconv.Itoa(w.slot.index)] = pages * pageSize
			}
		}
	}
	return snap
}

// residentPages reads a process's resident pages (/proc/PID/statm).
func residentPages(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0, errors.New("statm: short")
	}
	return strconv.ParseInt(fields[1], 10, 64)
}

// masterCollector exposes the snapshot in Prometheus' terms.
type masterCollector struct {
	snapshots chan chan metricsSnapshot // served by the master's loop
	done      chan struct{}

	requests                    *metrics.Requests
	workers, spawns, exits, rss *prometheus.Desc
}

func newMasterCollector(snapshots chan chan metricsSnapshot, done chan struct{}) *masterCollector {
	return &masterCollector{
		snapshots: snapshots, done: done,
		requests: metrics.NewRequests(),
		workers:  prometheus.NewDesc("m0serve_workers", "Worker processes by state.", []string{"state"}, nil),
		spawns:   prometheus.NewDesc("m0serve_worker_spawns_total", "Workers started, by reason.", []string{"reason"}, nil),
		exits:    prometheus.NewDesc("m0serve_worker_exits_total", "Worker processes ended, by reason.", []string{"reason"}, nil),
		rss:      prometheus.NewDesc("m0serve_worker_resident_bytes", "Resident memory per worker slot.", []string{"slot"}, nil),
	}
}

func (c *masterCollector) Describe(ch chan<- *prometheus.Desc) {
	c.requests.Describe(ch)
	for _, d := range []*prometheus.Desc{c.workers, c.spawns, c.exits, c.rss} {
		ch <- d
	}
}

func (c *masterCollector) Collect(ch chan<- prometheus.Metric) {
	reply := make(chan metricsSnapshot, 1)
	select {
	case c.snapshots <- reply:
	case <-c.done:
		return
	case <-time.After(5 * time.Second):
		return
	}
	snap := <-reply
	for state, n := range snap.states {
		ch <- prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(n), state)
	}
	for reason, n := range snap.spawns {
		ch <- prometheus.MustNewConstMetric(c.spawns, prometheus.CounterValue, float64(n), reason)
	}
	for reason, n := range snap.exits {
		ch <- prometheus.MustNewConstMetric(c.exits, prometheus.CounterValue, float64(n), reason)
	}
	// Counts include the workers gone; gauges are the live ones'.
	c.requests.Collect(ch, &snap.counters, snap.app, snap.backends)
	for slot, bytes := range snap.rss {
		ch <- prometheus.MustNewConstMetric(c.rss, prometheus.GaugeValue, float64(bytes), slot)
	}
}

// serveMetrics serves /metrics on addr; stop ends it.
func (m *master) serveMetrics(addr string) (stop func(), err error) {
	done := make(chan struct{})
	registry := prometheus.NewRegistry()
	registry.MustRegister(newMasterCollector(m.scrapes, done))
	stopServing, err := metrics.Serve(addr, registry, m.logf)
	if err != nil {
		return nil, err
	}
	return func() {
		close(done)
		stopServing()
	}, nil
}
