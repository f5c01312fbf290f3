package server

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/loop"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// serverAnswers is what the server answers on the serving port itself,
// never entering the app: --health-path (a liveness JSON, on the loop
// thread) and --metrics (Prometheus' text at MetricsPath, rendered on a
// goroutine: gathering allocates). Every other path goes to next.
type serverAnswers struct {
	health  []byte // the path, nil: off
	metrics []byte // the path, nil: off
	next    loop.Handler

	stats   *loop.Stats
	slot    int // the worker's slot, -1 in a single process
	pid     int
	started time.Time
	body    []byte // the health answer's, reused (loop thread)

	gather prometheus.Gatherer
	queue  *loop.JobQueue
}

// MetricsPath is where --metrics serves on the serving port, as the
// seed's m0serve does.
const MetricsPath = "/__metrics"

// validateAnswers checks --health-path and the static extras.
func (c *Config) validateAnswers() error {
	if c.HealthPath != "" && (c.HealthPath[0] != '/' || strings.ContainsAny(c.HealthPath, "?#%")) {
		return &ConfigError{Flag: "health-path", Reason: fmt.Sprintf("%q: want a path starting with / (no query)", c.HealthPath)}
	}
	if c.HealthPath != "" && c.Metrics && c.HealthPath == MetricsPath {
		return &ConfigError{Flag: "health-path", Reason: MetricsPath + " is --metrics'"}
	}
	if _, err := staticExtraFields(c.StaticHeaders); err != nil {
		return err
	}
	if strings.ContainsAny(c.StaticCacheControl, "\r\n\x00") {
		return &ConfigError{Flag: "static-cache-control", Reason: "the value holds a control character"}
	}
	return nil
}

// newServerAnswers wraps next when either answer is on (else nil).
// stats are the loop's counters (kept when either is on); gather is the
// process's registry for --metrics.
func newServerAnswers(cfg *Config, next loop.Handler, stats *loop.Stats, gather prometheus.Gatherer) *serverAnswers {
	if cfg.HealthPath == "" && !cfg.Metrics {
		return nil
	}
	a := &serverAnswers{next: next, stats: stats, slot: -1, pid: os.Getpid(), started: time.Now()}
	if cfg.Worker != nil {
		a.slot = cfg.Worker.Slot
	}
	if cfg.HealthPath != "" {
		a.health = []byte(cfg.HealthPath)
	}
	if cfg.Metrics && gather != nil {
		a.metrics, a.gather = []byte(MetricsPath), gather
		a.queue = loop.NewJobQueue(jobQueueSize)
		go func() {
			for j := a.queue.Take(); j != nil; j = a.queue.Take() {
				a.serveMetrics(j)
			}
		}()
	}
	return a
}

func (a *serverAnswers) close() {
	if a != nil && a.queue != nil {
		a.queue.Close()
	}
}

// ServeInline implements loop.Handler.
func (a *serverAnswers) ServeInline(req *loop.Request, w *loop.ResponseWriter) {
	p := req.Bytes(req.Path)
	switch {
	case a.health != nil && bytes.Equal(p, a.health):
		a.serveHealth(req, w)
	case a.metrics != nil && bytes.Equal(p, a.metrics):
		w.DeferTo(a.queue)
	default:
		a.next.ServeInline(req, w)
	}
}

// serveHealth answers {"status": "ok", ...}: what the loop holds (open
// sockets as of its last pass, requests out to the app, realtime holds).
func (a *serverAnswers) serveHealth(req *loop.Request, w *loop.ResponseWriter) {
	b := append(a.body[:0], `{"status":"ok","pid":`...)
	b = strconv.AppendInt(b, int64(a.pid), 10)
	if a.slot >= 0 {
		b = append(b, `,"worker":`...)
		b = strconv.AppendInt(b, int64(a.slot), 10)
	}
	b = append(b, `,"connections":`...)
	b = strconv.AppendInt(b, a.stats.Read().Open, 10)
	b = append(b, `,"requests_in_flight":`...)
	b = strconv.AppendInt(b, int64(req.JobsInFlight()), 10)
	b = append(b, `,"held_streams":`...)
	b = strconv.AppendInt(b, int64(req.HeldStreams()), 10)
	b = append(b, `,"uptime_s":`...)
	b = strconv.AppendInt(b, int64(time.Since(a.started)/time.Second), 10)
	b = append(b, "}\n"...)
	a.body = b
	w.AddHeader("Content-Type", "application/json")
	w.AddHeader("Cache-Control", "no-store")
	w.Respond(200, b)
}

// serveMetrics renders the registry (a goroutine of the queue).
func (a *serverAnswers) serveMetrics(j *loop.Job) {
	families, err := a.gather.Gather()
	var b bytes.Buffer
	for _, f := range families {
		if _, werr := expfmt.MetricFamilyToText(&b, f); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil && b.Len() == 0 {
		body := "metrics: " + err.Error() + "\n"
		j.SetHeader("Content-Type", "text/plain; charset=utf-8")
		if j.WriteHeader(500, int64(len(body))) == nil {
			j.Write([]byte(body))
		}
		j.Finish()
		return
	}
	j.SetHeader("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	j.SetHeader("Cache-Control", "no-store")
	if err := j.WriteHeader(200, int64(b.Len())); err != nil {
		j.Abort()
		return
	}
	j.Write(b.Bytes())
	j.Finish()
}
