package main

import (
	"strings"
	"testing"
)

const wrkReport = `Running 5s test @ http://127.0.0.1:18080/
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   140.12us  310.50us  12.34ms   98.50%
    Req/Sec   112.05k     5.12k  120.00k    80.00%
  Latency Distribution
     50%  105.00us
     75%  130.00us
     90%  180.00us
     99%    1.21ms
  557512 requests in 5.00s, 67.59MB read
  Socket errors: connect 0, read 3, write 0, timeout 0
  Non-2xx or 3xx responses: 7
Requests/sec: 111493.57
Transfer/sec:     13.51MB
`

func TestParseWrkReadsEveryFigure(t *testing.T) {
	r, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 557512 || r.Seconds != 5 {
		t.Errorf("requests %d in %v s, want 557512 in 5", r.Requests, r.Seconds)
	}
	if r.RPS != 111493.57 {
		t.Errorf("rps %v, want 111493.57", r.RPS)
	}
	if r.P50us != 105 || r.P99us != 1210 {
		t.Errorf("p50 %v µs p99 %v µs, want 105 and 1210", r.P50us, r.P99us)
	}
	if r.SocketErrors != "connect 0, read 3, write 0, timeout 0" {
		t.Errorf("socket errors %q", r.SocketErrors)
	}
	if r.Non2xx != 7 {
		t.Errorf("non-2xx %d, want 7", r.Non2xx)
	}
}

func TestParseWrkWithoutLatencyIsAnError(t *testing.T) {
	// A run without --latency has no percentile lines.
	var kept []string
	for _, line := range strings.Split(wrkReport, "\n") {
		if !strings.Contains(line, "%  ") || strings.Contains(line, "Stdev") {
			kept = append(kept, line)
		}
	}
	if _, err := parseWrk(strings.Join(kept, "\n")); err == nil {
		t.Fatal("parseWrk accepted a report without percentiles")
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Fatal("parseWrk accepted a connection failure")
	}
}

func TestParseLatencyUnits(t *testing.T) {
	cases := map[string]float64{
		"12.50us": 12.5,
		"1.21ms":  1210,
		"2.00s":   2e6,
		"1.50m":   90e6,
	}
	for text, want := range cases {
		got, err := parseLatency(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if diff := got - want; diff > 1e-6 || diff < -1e-6 {
			t.Errorf("%s = %v µs, want %v", text, got, want)
		}
	}
	if _, err := parseLatency("12.5ns"); err == nil {
		t.Error("parseLatency accepted an unknown unit")
	}
}

func TestParseWrkFlagsAZeroPercentile(t *testing.T) {
	report := strings.Replace(wrkReport, "99%    1.21ms", "99%    0.00us", 1)
	r, err := parseWrk(report)
	if err != nil {
		t.Fatal(err)
	}
	if r.P99us != 0 || r.LatencyNote == "" {
		t.Errorf("p99 %v note %q: want 0 and a note", r.P99us, r.LatencyNote)
	}
	clean, _ := parseWrk(wrkReport)
	if clean.LatencyNote != "" {
		t.Errorf("a clean report got a note: %q", clean.LatencyNote)
	}
}
