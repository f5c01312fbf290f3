package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/loop"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
	states    map[string]int
	spawns    map[string]int
	exits     map[string]int
	responses [6]int64
	open      int64
	inFlight  int64
	rss       map[string]int64 // by slot
	durations [len(loop.DurationBounds) + 1]int64
	sum       int64 // nanoseconds
}

func (m *master) snapshot() metricsSnapshot {
	snap := metricsSnapshot{states: map[string]int{"booting": 0, "ready": 0, "draining": 0},
		spawns: map[string]int{}, exits: map[string]int{}, rss: map[string]int64{}}
	for k, v := range m.spawnCounts {
		snap.spawns[k] = v
	}
	for k, v := range m.exitCounts {
		snap.exits[k] = v
	}
	snap.responses, snap.durations, snap.sum = m.gone.responses, m.gone.durations, m.gone.sum
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
		snap.add(w.stats)
		snap.open += w.stats.Open.Load()
		snap.inFlight += w.stats.InFlight.Load()
		if w == w.slot.current {
			if pages, err := residentPages(w.pid); err == nil {
				snap.rss[strconv.Itoa(w.slot.index)] = pages * pageSize
			}
		}
	}
	return snap
}

// add adds a worker's counters.
func (snap *metricsSnapshot) add(stats *loop.Stats) {
	for i := range snap.responses {
		snap.responses[i] += stats.Responses[i].Load()
	}
	for i := range snap.durations {
		snap.durations[i] += stats.Durations[i].Load()
	}
	snap.sum += stats.DurationSum.Load()
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

	workers, spawns, exits, responses, open, inFlight, rss, duration *prometheus.Desc
}

func newMasterCollector(snapshots chan chan metricsSnapshot, done chan struct{}) *masterCollector {
	return &masterCollector{
		snapshots: snapshots, done: done,
		workers:   prometheus.NewDesc("m0serve_workers", "Worker processes by state.", []string{"state"}, nil),
		spawns:    prometheus.NewDesc("m0serve_worker_spawns_total", "Workers started, by reason.", []string{"reason"}, nil),
		exits:     prometheus.NewDesc("m0serve_worker_exits_total", "Worker processes ended, by reason.", []string{"reason"}, nil),
		responses: prometheus.NewDesc("m0serve_responses_total", "Responses by status class (workers alive and gone).", []string{"class"}, nil),
		open:      prometheus.NewDesc("m0serve_open_connections", "Connections open in the workers.", nil, nil),
		inFlight:  prometheus.NewDesc("m0serve_requests_in_flight", "Requests handed to the app and not yet answered.", nil, nil),
		rss:       prometheus.NewDesc("m0serve_worker_resident_bytes", "Resident memory per worker slot.", []string{"slot"}, nil),
		duration:  prometheus.NewDesc("m0serve_request_duration_seconds", "Time from a request's head to its response's head.", nil, nil),
	}
}

func (c *masterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.workers, c.spawns, c.exits, c.responses, c.open, c.inFlight, c.rss, c.duration} {
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
	for i, n := range snap.responses {
		class := strconv.Itoa(i) + "xx"
		if i == 0 {
			class = "other"
		}
		ch <- prometheus.MustNewConstMetric(c.responses, prometheus.CounterValue, float64(n), class)
	}
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(snap.open))
	ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(snap.inFlight))
	buckets, count := map[float64]uint64{}, uint64(0)
	for i, bound := range loop.DurationBounds {
		count += uint64(snap.durations[i])
		buckets[bound.Seconds()] = count
	}
	count += uint64(snap.durations[len(loop.DurationBounds)])
	ch <- prometheus.MustNewConstHistogram(c.duration, count, time.Duration(snap.sum).Seconds(), buckets)
	for slot, bytes := range snap.rss {
		ch <- prometheus.MustNewConstMetric(c.rss, prometheus.GaugeValue, float64(bytes), slot)
	}
}

// serveMetrics serves /metrics on addr; stop ends it.
func (m *master) serveMetrics(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-address %s: %w", addr, err)
	}
	done := make(chan struct{})
	registry := prometheus.NewRegistry()
	registry.MustRegister(newMasterCollector(m.scrapes, done))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	m.logf("m0serve: metrics on http://%s/metrics", ln.Addr())
	return func() {
		close(done)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}
