package main

import (
	"strings"
	"testing"
	"time"
)

func TestWrkArgsPerScenario(t *testing.T) {
	url := "http://127.0.0.1:18080/"
	cases := []struct {
		scenario Scenario
		want     string
	}{
		{Scenario{Name: "c16", Connections: 16}, "-t1 -c16 -d5s --latency " + url},
		{Scenario{Name: "c16-close", Connections: 16, Close: true},
			"-t1 -c16 -d5s --latency -H Connection: close " + url},
		{Scenario{Name: "c16-pipe16", Connections: 16, PipelineDepth: 16},
			"-t1 -c16 -d5s --latency -s /b/pipeline.lua " + url + " -- 16"},
	}
	for _, c := range cases {
		got := strings.Join(c.scenario.WrkArgs(url, 5*time.Second, "/b/pipeline.lua"), " ")
		if got != c.want {
			t.Errorf("%s: wrk %s\nwant     %s", c.scenario.Name, got, c.want)
		}
	}
}

func TestWrkDurationIsWholeSeconds(t *testing.T) {
	cases := map[time.Duration]string{
		5 * time.Second:         "5s",
		1500 * time.Millisecond: "2s",
		100 * time.Millisecond:  "1s",
		2 * time.Minute:         "120s",
	}
	for d, want := range cases {
		if got := wrkDuration(d); got != want {
			t.Errorf("wrkDuration(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestSelectScenarios(t *testing.T) {
	all, err := selectScenarios("")
	if err != nil || len(all) != 4 {
		t.Fatalf("default selection: %d scenarios, %v; want all 4", len(all), err)
	}
	two, err := selectScenarios("c256, c16-close")
	if err != nil {
		t.Fatal(err)
	}
	if len(two) != 2 || two[0].Name != "c256" || two[1].Name != "c16-close" || !two[1].Close {
		t.Errorf("selected %+v", two)
	}
	for _, s := range all {
		if s.Name == "c1" || s.Name == "c64" {
			t.Errorf("default selection includes %s, measured only when named", s.Name)
		}
	}
	python, err := selectScenarios("c1,c16,c64")
	if err != nil {
		t.Fatal(err)
	}
	if len(python) != 3 || python[0].Connections != 1 || python[2].Connections != 64 || python[2].Close {
		t.Errorf("selected %+v, want c1, c16, c64 keep-alive", python)
	}
	if _, err := selectScenarios("c16,c9000"); err == nil {
		t.Error("an unknown scenario was accepted")
	}
}
