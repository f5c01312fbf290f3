//go:build linux

package tests

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads the master's metrics with Prometheus' own text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the scrape: %v", err)
	}
	return families
}

// metricValue is the value of name's sample whose label has value
// (label "" for none), -1 when there is none.
func metricValue(families map[string]*dto.MetricFamily, name, label, value string) float64 {
	family := families[name]
	if family == nil {
		return -1
	}
	for _, m := range family.Metric {
		if label != "" {
			found := false
			for _, pair := range m.Label {
				found = found || pair.GetName() == label && pair.GetValue() == value
			}
			if !found {
				continue
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

var metricsLine = regexp.MustCompile(`metrics on (http://[0-9.:]+/metrics)`)

// TestMetrics: the master's /metrics, scraped before and after load:
// workers by state, spawns by reason, responses by class and the
// duration histogram counted by the workers in shared memory, and a
// crashed worker's exit and respawn.
func TestMetrics(t *testing.T) {
	dir := workersAppDir(t, "v1")
	s := startWorkers(t, dir, nil, "--workers", "2", "--metrics-address", "127.0.0.1:0")
	m := metricsLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics line:\n%s", s.logs)
	}
	before := scrape(t, m[1])
	if got := metricValue(before, "m0serve_workers", "state", "ready"); got != 2 {
		t.Errorf("ready workers: %v", got)
	}
	if got := metricValue(before, "m0serve_worker_spawns_total", "reason", "boot"); got != 2 {
		t.Errorf("boot spawns: %v", got)
	}
	if got := metricValue(before, "m0serve_responses_total", "class", "2xx"); got != 0 {
		t.Errorf("2xx before load: %v", got)
	}
	client := oneShot()
	for i := 0; i < 20; i++ {
		if status, _, err := fetch(client, s.url("/version")); err != nil || status != 200 {
			t.Fatalf("request %d: %d %v", i, status, err)
		}
	}
	if status, _, _ := fetch(client, s.url("/no-such-path-"+fmt.Sprint(1))); status == 0 {
		t.Fatal("no answer")
	}
	// A crash: its exit is counted, its replacement spawned, and what it
	// served stays in the totals.
	fetch(client, s.url("/crash?how=exit"))
	s.waitLog(t, `respawn`, 1, 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		after := scrape(t, m[1])
		ok := metricValue(after, "m0serve_responses_total", "class", "2xx") >= 20 &&
			metricValue(after, "m0serve_request_duration_seconds", "", "") >= 21 &&
			metricValue(after, "m0serve_worker_exits_total", "reason", "crash") == 1 &&
			metricValue(after, "m0serve_worker_spawns_total", "reason", "crash") == 1 &&
			metricValue(after, "m0serve_workers", "state", "ready") == 2 &&
			metricValue(after, "m0serve_open_connections", "", "") >= 0 &&
			metricValue(after, "m0serve_worker_resident_bytes", "slot", "0") > 0
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after load: 2xx %v, crash exits %v, crash spawns %v, ready %v, rss %v\n%s",
				metricValue(after, "m0serve_responses_total", "class", "2xx"),
				metricValue(after, "m0serve_worker_exits_total", "reason", "crash"),
				metricValue(after, "m0serve_worker_spawns_total", "reason", "crash"),
				metricValue(after, "m0serve_workers", "state", "ready"),
				metricValue(after, "m0serve_worker_resident_bytes", "slot", "0"), s.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
