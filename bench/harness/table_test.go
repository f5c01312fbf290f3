package main

import (
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		values []float64
		want   float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, c := range cases {
		if got := median(c.values); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.values, got, c.want)
		}
	}
	values := []float64{3, 1, 2}
	median(values)
	if values[0] != 3 {
		t.Error("median reordered its input")
	}
}

func TestSummariseTakesMediansPerArmAndScenario(t *testing.T) {
	runs := []Run{
		{Scenario: "c16", Arm: "a", WrkResult: WrkResult{RPS: 100, P50us: 10}, CPUusPerRequest: 5, ClientCores: 0.9},
		{Scenario: "c16", Arm: "b", WrkResult: WrkResult{RPS: 50}, CPUusPerRequest: 9},
		{Scenario: "c16", Arm: "a", WrkResult: WrkResult{RPS: 300, P50us: 30}, CPUusPerRequest: 7, ClientCores: 1},
		{Scenario: "c16", Arm: "a", WrkResult: WrkResult{RPS: 200, P50us: 20}, CPUusPerRequest: 6, ClientCores: 0.5},
		{Scenario: "c256", Arm: "a", WrkResult: WrkResult{RPS: 1}, CPUusPerRequest: 1},
	}
	s := summarise(runs)
	if len(s) != 3 {
		t.Fatalf("%d summaries, want 3: %+v", len(s), s)
	}
	a := s[0]
	if a.Scenario != "c16" || a.Arm != "a" || a.Rounds != 3 || a.RPS != 200 || a.P50us != 20 || a.CPUusPerRequest != 6 || a.ClientCores != 0.9 {
		t.Errorf("c16/a summary %+v, want 3 rounds, medians 200 rps, 20 µs, 6 µs/req, 0.9 client cores", a)
	}
	if s[1].Arm != "b" || s[2].Scenario != "c256" {
		t.Errorf("summaries out of run order: %+v", s)
	}
}

func TestPrintTableShowsRatiosAndSkippedArms(t *testing.T) {
	records := []*ArmRecord{
		{Arm: Arm{Name: "m0serve"}},
		{Arm: Arm{Name: "fasthttp", Peer: true}},
		{Arm: Arm{Name: "uvicorn", SkipReason: "uvicorn not on PATH"}},
		{Arm: Arm{Name: "broken"}, Failed: "exited before listening"},
	}
	summaries := []Summary{
		{Scenario: "c16", Arm: "m0serve", RPS: 200000, CPUusPerRequest: 4, Cores: 0.93, ClientCores: 0.97},
		{Scenario: "c16", Arm: "fasthttp", RPS: 100000, CPUusPerRequest: 8},
	}
	var out strings.Builder
	printTable(&out, scenarios[:1], records, summaries)
	text := out.String()
	for _, want := range []string{
		"cores client",
		"0.93   0.97", // the server's cores, then the load generator's
		"vs fasthttp",
		"2.00/0.50", // m0serve: twice the rps at half the CPU per request
		"1.00/1.00", // the peer against itself
		"skipped: uvicorn not on PATH",
		"failed: exited before listening",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
}

func TestPrintTableComparesWithinAGroupOnly(t *testing.T) {
	records := []*ArmRecord{
		{Arm: Arm{Name: "m0serve-wsgi", Group: "hello"}},
		{Arm: Arm{Name: "uwsgi", Group: "hello", Peer: true}},
		{Arm: Arm{Name: "m0serve-flask", Group: "flask"}},
		{Arm: Arm{Name: "uwsgi-flask", Group: "flask", Peer: true}},
	}
	summaries := []Summary{
		{Scenario: "c16", Arm: "m0serve-wsgi", RPS: 300, CPUusPerRequest: 10},
		{Scenario: "c16", Arm: "uwsgi", RPS: 100, CPUusPerRequest: 20},
		{Scenario: "c16", Arm: "m0serve-flask", RPS: 50, CPUusPerRequest: 90},
		{Scenario: "c16", Arm: "uwsgi-flask", RPS: 25, CPUusPerRequest: 100},
	}
	var out strings.Builder
	printTable(&out, scenarios[:1], records, summaries)
	text := out.String()
	_, flask, found := strings.Cut(text, "[flask]")
	if !found || !strings.Contains(text, "[hello]") {
		t.Fatalf("table without a section per group:\n%s", text)
	}
	hello, _, _ := strings.Cut(text, "[flask]")
	for _, want := range []string{"vs uwsgi", "3.00/0.50"} {
		if !strings.Contains(hello, want) {
			t.Errorf("hello section lacks %q:\n%s", want, hello)
		}
	}
	for _, want := range []string{"vs uwsgi-flask", "2.00/0.90"} {
		if !strings.Contains(flask, want) {
			t.Errorf("flask section lacks %q:\n%s", want, flask)
		}
	}
	// Across groups no ratio is taken: 300 rps against the Flask peer's 25
	// would be 12.00.
	if strings.Contains(hello, "vs uwsgi-flask") || strings.Contains(flask, "vs uwsgi ") || strings.Contains(text, "12.00") {
		t.Errorf("a ratio across groups:\n%s", text)
	}
}

func TestPrintResponsesListsSizeAndHeaderOrder(t *testing.T) {
	records := []*ArmRecord{
		{Arm: Arm{Name: "floor"}, Parity: &Parity{Status: 200, ResponseBytes: 127, HeaderOrder: []string{"Server", "Date"}}},
		{Arm: Arm{Name: "absent", SkipReason: "not built"}},
	}
	var out strings.Builder
	printResponses(&out, records)
	if !strings.Contains(out.String(), "floor          200, 127 bytes, headers Server, Date") {
		t.Errorf("responses:\n%s", out.String())
	}
	if strings.Contains(out.String(), "absent") {
		t.Errorf("a skipped arm listed a response:\n%s", out.String())
	}
}

func TestSummariseLeavesUnreportedLatencyOut(t *testing.T) {
	runs := []Run{
		{Scenario: "c16-pipe16", Arm: "a", WrkResult: WrkResult{RPS: 1, P99us: 0}},
		{Scenario: "c16-pipe16", Arm: "a", WrkResult: WrkResult{RPS: 1, P99us: 900}},
		{Scenario: "c16-pipe16", Arm: "a", WrkResult: WrkResult{RPS: 1, P99us: 700}},
		{Scenario: "c16-pipe16", Arm: "b", WrkResult: WrkResult{RPS: 1, P99us: 0}},
	}
	s := summarise(runs)
	if s[0].P99us != 800 {
		t.Errorf("p99 median %v, want 800 (the 0 left out)", s[0].P99us)
	}
	if s[1].P99us != 0 {
		t.Errorf("p99 %v for an arm wrk never gave one for, want 0", s[1].P99us)
	}
	var out strings.Builder
	printTable(&out, scenarios[3:], []*ArmRecord{{Arm: Arm{Name: "b"}}}, s[1:])
	if !strings.Contains(out.String(), "  -  ") {
		t.Errorf("an unreported p99 should print as -:\n%s", out.String())
	}
}
