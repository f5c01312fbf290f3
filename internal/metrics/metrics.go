// Package metrics is what m0serve's Prometheus endpoint serves of the
// loop's and the handlers' counters (counters.Loop, workerproto.AppStats):
// one process's, or a master's workers' summed. Pure Go, so that the
// master (package supervisor) and a single process (package server)
// describe them alike.
package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/internal/configerr"
	"github.com/m0serve/m0serve/internal/counters"
	"github.com/m0serve/m0serve/internal/workerproto"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Counters are what the metrics read of one process's loop counters and
// AppStats, or of a master's workers summed.
type Counters struct {
	Responses   [6]int64
	Durations   [counters.Buckets]int64
	DurationSum int64 // nanoseconds
	Overloaded  int64
	Busy        int64 // nanoseconds
	Open        int64
	InFlight    int64
}

// Add adds a process's counts (not its gauges: the counts of a worker
// gone stay in the totals, its gauges do not). Either may be nil.
func (c *Counters) Add(stats *counters.Loop, app *workerproto.AppStats) {
	if stats != nil {
		for i := range c.Responses {
			c.Responses[i] += stats.Responses[i]
		}
		for i := range c.Durations {
			c.Durations[i] += stats.Durations[i]
		}
		c.DurationSum += stats.DurationSum
		c.Overloaded += stats.Overloaded
	}
	if app != nil {
		c.Busy += app.Busy.Load()
	}
}

// AddGauges adds a live process's gauges.
func (c *Counters) AddGauges(stats *counters.Loop) {
	if stats != nil {
		c.Open += stats.Open
		c.InFlight += stats.InFlight
	}
}

// Requests describes Counters and the backend in Prometheus' terms;
// a master's collector and a single process's share it.
type Requests struct {
	responses, duration, open, inFlight, overloaded, busy, backend *prometheus.Desc
}

// NewRequests returns the descriptions.
func NewRequests() *Requests {
	return &Requests{
		responses:  prometheus.NewDesc("m0serve_responses_total", "Responses by status class.", []string{"class"}, nil),
		duration:   prometheus.NewDesc("m0serve_request_duration_seconds", "Time from a request's head to its response's head.", nil, nil),
		open:       prometheus.NewDesc("m0serve_open_connections", "Connections open.", nil, nil),
		inFlight:   prometheus.NewDesc("m0serve_requests_in_flight", "Requests handed to the app and not yet answered.", nil, nil),
		overloaded: prometheus.NewDesc("m0serve_limit_concurrency_refusals_total", "Requests answered 503 by the server under --limit-concurrency, without calling the app.", nil, nil),
		busy: prometheus.NewDesc("m0serve_python_busy_seconds_total",
			"Seconds requests spent with the Python app, from a handler thread (or the ASGI executor) taking one to its response's end; ASGI requests overlap.", nil, nil),
		backend: prometheus.NewDesc("m0serve_backend_info", "The I/O backend in use and its optional features (1 per combination in use).", []string{"backend", "features"}, nil),
	}
}

// Describe sends the descriptions.
func (r *Requests) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{r.responses, r.duration, r.open, r.inFlight, r.overloaded, r.busy, r.backend} {
		ch <- d
	}
}

// Collect sends c's metrics; busy only where there is an app, and one
// backend_info per backend description (loop.Backend.Name) in backends.
func (r *Requests) Collect(ch chan<- prometheus.Metric, c *Counters, app bool, backends []string) {
	for i, n := range c.Responses {
		class := strconv.Itoa(i) + "xx"
		if i == 0 {
			class = "other"
		}
		ch <- prometheus.MustNewConstMetric(r.responses, prometheus.CounterValue, float64(n), class)
	}
	buckets, count := map[float64]uint64{}, uint64(0)
	for i, bound := range counters.Bounds {
		count += uint64(c.Durations[i])
		buckets[bound.Seconds()] = count
	}
	count += uint64(c.Durations[len(counters.Bounds)])
	ch <- prometheus.MustNewConstHistogram(r.duration, count, time.Duration(c.DurationSum).Seconds(), buckets)
	ch <- prometheus.MustNewConstMetric(r.open, prometheus.GaugeValue, float64(c.Open))
	ch <- prometheus.MustNewConstMetric(r.inFlight, prometheus.GaugeValue, float64(c.InFlight))
	ch <- prometheus.MustNewConstMetric(r.overloaded, prometheus.CounterValue, float64(c.Overloaded))
	if app {
		ch <- prometheus.MustNewConstMetric(r.busy, prometheus.CounterValue, time.Duration(c.Busy).Seconds())
	}
	seen := map[[2]string]bool{}
	for _, name := range backends {
		labels := BackendLabels(name)
		if name == "" || seen[labels] {
			continue
		}
		seen[labels] = true
		ch <- prometheus.MustNewConstMetric(r.backend, prometheus.GaugeValue, 1, labels[0], labels[1])
	}
}

// BackendLabels splits a backend's description ("io_uring: a, b" or
// "epoll (a, b)") into its name and features.
func BackendLabels(name string) [2]string {
	if backend, features, ok := strings.Cut(name, ": "); ok {
		return [2]string{backend, features}
	}
	if backend, features, ok := strings.Cut(name, " ("); ok {
		return [2]string{backend, strings.TrimSuffix(features, ")")}
	}
	return [2]string{name, ""}
}

// Serve serves registry's metrics at http://addr/metrics from a
// goroutine of its own (never the loop's thread); stop ends it. It logs
// where, with the port a :0 got. GET and HEAD only (405 otherwise), at
// most metricsMaxConns connections (listen.go: the idlest
// makes way), each with read, write and idle timeouts.
func Serve(addr string, registry *prometheus.Registry, logf func(string, ...any)) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &configerr.Error{Flag: "metrics-address", Reason: fmt.Sprintf("%s: %v", addr, err)}
	}
	mux := http.NewServeMux()
	// "GET" matches HEAD too; another method gets 405 with Allow.
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: metricsReadHeaderTimeout,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
	capped := newCappedListener(ln, metricsMaxConns)
	srv.ConnState = capped.connState
	go srv.Serve(capped)
	logf("m0serve: metrics on http://%s/metrics", ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}
