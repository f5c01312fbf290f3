//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads the metrics with Prometheus' own text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(scrapeText(t, url)))
	if err != nil {
		t.Fatalf("parsing the scrape: %v", err)
	}
	return families
}

func scrapeText(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// promtoolCheck runs Prometheus' own linter (Debian's prometheus
// package) over a scrape: it must find nothing to say.
func promtoolCheck(t *testing.T, url string) {
	t.Helper()
	requireCommand(t, "promtool")
	check := exec.Command("promtool", "check", "metrics")
	check.Stdin = bytes.NewReader(scrapeText(t, url))
	if out, err := check.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// backendLabel is the backend label of m0serve_backend_info, "" when
// there is none; features must name something too.
func backendLabel(families map[string]*dto.MetricFamily) string {
	family := families["m0serve_backend_info"]
	if family == nil || len(family.Metric) != 1 {
		return ""
	}
	backend, features := "", ""
	for _, pair := range family.Metric[0].Label {
		switch pair.GetName() {
		case "backend":
			backend = pair.GetValue()
		case "features":
			features = pair.GetValue()
		}
	}
	if features == "" {
		return ""
	}
	return backend
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
			metricValue(after, "m0serve_worker_resident_bytes", "slot", "0") > 0 &&
			metricValue(after, "m0serve_python_busy_seconds_total", "", "") > 0 &&
			metricValue(after, "m0serve_limit_concurrency_refusals_total", "", "") == 0 &&
			backendLabel(after) != ""
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after load: 2xx %v, crash exits %v, crash spawns %v, ready %v, rss %v, busy %v, backend %q\n%s",
				metricValue(after, "m0serve_responses_total", "class", "2xx"),
				metricValue(after, "m0serve_worker_exits_total", "reason", "crash"),
				metricValue(after, "m0serve_worker_spawns_total", "reason", "crash"),
				metricValue(after, "m0serve_workers", "state", "ready"),
				metricValue(after, "m0serve_worker_resident_bytes", "slot", "0"),
				metricValue(after, "m0serve_python_busy_seconds_total", "", ""),
				backendLabel(after), s.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	promtoolCheck(t, m[1])
}

// TestMetricsSingleProcess: without --workers the process serves its own
// metrics: responses, the time in the app, a 503 under
// --limit-concurrency counted, the backend in use, and the process's
// own memory.
func TestMetricsSingleProcess(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	s := start(t, wsgiVariant("GATE_FILE="+gate), "--app-dir", appsDir(t), "--limit-concurrency", "1",
		"--threads", "2", "--metrics-address", "127.0.0.1:0", "gate_app:app")
	m := metricsLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics line:\n%s", s.logs)
	}
	before := scrape(t, m[1])
	for _, name := range []string{"m0serve_responses_total", "m0serve_python_busy_seconds_total", "m0serve_limit_concurrency_refusals_total"} {
		if got := metricValue(before, name, "", ""); got != 0 {
			t.Errorf("%s before load: %v", name, got)
		}
	}
	if got := backendLabel(before); got != "io_uring" && got != "epoll" {
		t.Errorf("m0serve_backend_info's backend: %q\n%s", got, scrapeText(t, m[1]))
	}
	if got := metricValue(before, "process_resident_memory_bytes", "", ""); got <= 0 {
		t.Errorf("process_resident_memory_bytes: %v", got)
	}

	client := oneShot()
	for i := 0; i < 5; i++ {
		if status, _, err := fetch(client, s.url("/quick")); err != nil || status != 200 {
			t.Fatalf("request %d: %d %v\n%s", i, status, err, s.logs)
		}
	}
	// One request held in the app: the next is one too many.
	held := make(chan int, 1)
	go func() {
		status, _, _ := fetch(client, s.url("/hold"))
		held <- status
	}()
	if lines := waitLines(t, gate+".log", 6); len(lines) != 6 {
		t.Fatalf("the app saw %q, want 5 and the hold\n%s", lines, s.logs)
	}
	if status, _, err := fetch(client, s.url("/refused")); err != nil || status != 503 {
		t.Errorf("a request beyond --limit-concurrency 1: %d %v, want 503", status, err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if status := <-held; status != 200 {
		t.Errorf("held request: %d", status)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		after := scrape(t, m[1])
		twos := metricValue(after, "m0serve_responses_total", "class", "2xx")
		fives := metricValue(after, "m0serve_responses_total", "class", "5xx")
		refused := metricValue(after, "m0serve_limit_concurrency_refusals_total", "", "")
		busy := metricValue(after, "m0serve_python_busy_seconds_total", "", "")
		durations := metricValue(after, "m0serve_request_duration_seconds", "", "")
		if twos == 6 && fives == 1 && refused == 1 && busy > 0 && durations == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after load: 2xx %v, 5xx %v, refused %v, busy %v, durations %v\n%s",
				twos, fives, refused, busy, durations, scrapeText(t, m[1]))
		}
		time.Sleep(50 * time.Millisecond)
	}
	promtoolCheck(t, m[1])
}

// TestMetricsASGI: a single process serving an ASGI app counts its
// responses and the time they spent with the app (the executor's tasks).
func TestMetricsASGI(t *testing.T) {
	s := startASGI(t, variants[0], "http_asgi_app:app", "--metrics-address", "127.0.0.1:0")
	m := metricsLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics line:\n%s", s.logs)
	}
	client := oneShot()
	for i := 0; i < 3; i++ {
		if status, _, err := fetch(client, s.url("/stream")); err != nil || status != 200 {
			t.Fatalf("request %d: %d %v\n%s", i, status, err, s.logs)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		after := scrape(t, m[1])
		twos := metricValue(after, "m0serve_responses_total", "class", "2xx")
		busy := metricValue(after, "m0serve_python_busy_seconds_total", "", "")
		if twos == 3 && busy > 0 && backendLabel(after) == "io_uring" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after load: 2xx %v, busy %v\n%s", twos, busy, scrapeText(t, m[1]))
		}
		time.Sleep(50 * time.Millisecond)
	}
	promtoolCheck(t, m[1])
}

// TestMetricsBusyOneThread: one handler thread takes queued requests in a
// batch and serves them one after another; its busy seconds count each
// from the end of the one before, so they stay within the wall time
// (counting each from the batch's take would count the waits too).
func TestMetricsBusyOneThread(t *testing.T) {
	s := startWSGI(t, "sleep_app:app", "--threads", "1", "--metrics-address", "127.0.0.1:0")
	m := metricsLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics line:\n%s", s.logs)
	}
	const requests = 8
	began := time.Now()
	statuses := make(chan int, requests)
	for i := 0; i < requests; i++ {
		go func() {
			status, _, _ := fetch(oneShot(), s.url(fmt.Sprint("/", i)))
			statuses <- status
		}()
	}
	for i := 0; i < requests; i++ {
		if status := <-statuses; status != 200 {
			t.Fatalf("request: %d\n%s", status, s.logs)
		}
	}
	// Each request sleeps 0.1 s in the app, one at a time. The handler
	// thread counts a request once the loop has its response, so the last
	// one's count may land just after its client has read it.
	var busy float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		busy = metricValue(scrape(t, m[1]), "m0serve_python_busy_seconds_total", "", "")
		if busy >= requests*0.1 || time.Now().After(deadline) {
			break
		}
	}
	wall := time.Since(began).Seconds()
	if busy < requests*0.1 || busy > wall {
		t.Errorf("busy %.3f s for %d requests of 0.1 s in %.3f s of wall time", busy, requests, wall)
	}
	if status, body, _ := fetch(oneShot(), s.url("/max")); status != 200 || !strings.HasPrefix(body, "1 ") {
		t.Errorf("/max: %d %q: more than one request in the app at once", status, body)
	}
}

// openFDs counts the descriptors process pid has open.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestMetricsListenerBounds: 1 100 keep-alive connections to
// --metrics-address, each left idle after a scrape, pin at most a few
// descriptors of the server (the listener keeps 16 and the idlest makes
// way for a new one); a scrape still gets through beside them; a method
// other than GET or HEAD is a 405.
func TestMetricsListenerBounds(t *testing.T) {
	t.Run("single", func(t *testing.T) { testMetricsListenerBounds(t) })
	// The master's descriptors: a worker it respawns needs some.
	t.Run("master", func(t *testing.T) { testMetricsListenerBounds(t, "--workers", "1") })
}

func testMetricsListenerBounds(t *testing.T, args ...string) {
	s := start(t, variants[0], append([]string{"--native", "hello", "--metrics-address", "127.0.0.1:0"}, args...)...)
	m := metricsLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics line:\n%s", s.logs)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(m[1], "http://"), "/metrics")
	pid := s.cmd.Process.Pid
	before := openFDs(t, pid)
	const clients = 1100
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < clients; i++ {
		c, err := net.DialTimeout("tcp", host, 10*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		// A HEAD scrape leaves the connection idle, kept alive; one the
		// server closed at once reads EOF here, also fine.
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Write([]byte("HEAD /metrics HTTP/1.1\r\nHost: m\r\n\r\n")); err != nil {
			continue
		}
		if resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "HEAD"}); err == nil {
			resp.Body.Close()
		}
	}
	n := openFDs(t, pid)
	t.Logf("%d idle metrics connections: the server holds %d descriptors, %d before", clients, n, before)
	if n > before+16+4 {
		t.Errorf("%d idle metrics connections: the server holds %d descriptors, %d before", clients, n, before)
	}
	if got := metricValue(scrape(t, m[1]), "m0serve_open_connections", "", ""); got != 0 {
		t.Errorf("m0serve_open_connections: %v", got)
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Post(m[1], "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /metrics: %d, Allow %q; want 405 with GET, HEAD", resp.StatusCode, resp.Header.Get("Allow"))
	}
}
