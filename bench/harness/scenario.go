package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Scenario is one load shape wrk puts on every arm.
type Scenario struct {
	Name        string `json:"name"`
	Connections int    `json:"connections"`
	// Close sends "Connection: close" on every request: a connect, one
	// request and a close per response, the accept path's cost.
	Close bool `json:"close,omitempty"`
	// PipelineDepth > 1 sends that many requests per write (pipeline.lua).
	PipelineDepth int `json:"pipeline_depth,omitempty"`
	// WebSocket is "echo" or "broadcast" for the scenarios of make
	// bench-ws, driven by wsload (see Arm.Applies for which arms run).
	WebSocket string `json:"websocket,omitempty"`
	// Reference is a published figure to read the table beside.
	Reference string `json:"reference,omitempty"`
	// H2Streams > 0 makes it an HTTP/2 scenario (make bench-h2): h2load
	// opens Connections connections with that many streams at once on
	// each against HTTP2 arms; HTTP/1.1 arms get wrk at Connections ×
	// H2Streams connections, the same requests in flight.
	H2Streams int `json:"h2_streams,omitempty"`
}

// scenarios are the four shapes a run measures unless -scenarios says
// otherwise.
var scenarios = []Scenario{
	{Name: "c16", Connections: 16},
	{Name: "c256", Connections: 256},
	{Name: "c16-close", Connections: 16, Close: true},
	{Name: "c16-pipe16", Connections: 16, PipelineDepth: 16},
}

// moreScenarios are measured only when named. c1 is one request at a
// time: no batching anywhere, so every per-request cost (a handoff to a
// Python thread, a wake-up) shows undiluted, and p50 is the latency of
// one request through the server. c4 is a worker's usual production
// load: a few requests at once, too few to batch. c64 sits between c16
// and c256 for the Python rows, where one worker saturates long before
// 256 connections.
var moreScenarios = []Scenario{
	{Name: "c1", Connections: 1},
	{Name: "c4", Connections: 4},
	{Name: "c64", Connections: 64},
	{Name: "h2-c16m10", Connections: 16, H2Streams: 10},
}

// webSocketScenarios are make bench-ws's: ping-pong of one 64-byte text
// message on every connection (an HTTP arm meanwhile gets wrk at the same
// connection count: the request its CPU per message is read against),
// and Granian's broadcast, each client's messages sent to every client.
var webSocketScenarios = []Scenario{
	{Name: "ws-c1", Connections: 1, WebSocket: "echo"},
	{Name: "ws-c16", Connections: 16, WebSocket: "echo"},
	{Name: "ws-c256", Connections: 256, WebSocket: "echo"},
	{Name: "ws-broadcast16", Connections: 16, WebSocket: "broadcast",
		Reference: "Granian's published figure (benchmarks/vs.md, Granian 2.8.1, 5 Aug 2026, Ryzen 7 5700X): " +
			"Granian ASGI 2.05x uvicorn's messages/s at 16 clients (361024 against 176116 combined; 339787 against 165756 received)"},
	{Name: "ws-broadcast256", Connections: 256, WebSocket: "broadcast"},
}

// Describe is the scenario in words for the table.
func (s Scenario) Describe() string {
	switch {
	case s.H2Streams > 0:
		return fmt.Sprintf("HTTP/2: %d connections × %d streams (h2load); HTTP/1.1 arms: wrk at %d connections",
			s.Connections, s.H2Streams, s.Connections*s.H2Streams)
	case s.WebSocket == "echo":
		return fmt.Sprintf("%d WebSocket connections, echo ping-pong; HTTP arms: wrk keep-alive", s.Connections)
	case s.WebSocket == "broadcast":
		return fmt.Sprintf("%d WebSocket clients, each message sent to all", s.Connections)
	case s.Close:
		return fmt.Sprintf("%d connections, Connection: close", s.Connections)
	case s.PipelineDepth > 1:
		return fmt.Sprintf("%d connections, keep-alive, pipelined depth %d", s.Connections, s.PipelineDepth)
	default:
		return fmt.Sprintf("%d connections, keep-alive", s.Connections)
	}
}

// WrkArgs is wrk's command line for this scenario: one wrk thread (it has
// one core to itself), latency percentiles on.
func (s Scenario) WrkArgs(url string, duration time.Duration, pipelineScript string) []string {
	connections := s.Connections
	if s.H2Streams > 0 {
		connections *= s.H2Streams
	}
	args := []string{"-t1", "-c" + strconv.Itoa(connections), "-d" + wrkDuration(duration), "--latency"}
	if s.Close {
		args = append(args, "-H", "Connection: close")
	}
	if s.PipelineDepth > 1 {
		args = append(args, "-s", pipelineScript)
	}
	args = append(args, url)
	if s.PipelineDepth > 1 {
		// wrk passes what follows the URL to the script's init(args).
		args = append(args, "--", strconv.Itoa(s.PipelineDepth))
	}
	return args
}

// wrkDuration renders d in whole seconds: wrk's -d takes s, m and h only.
func wrkDuration(d time.Duration) string {
	seconds := int(d.Round(time.Second) / time.Second)
	if seconds < 1 {
		seconds = 1
	}
	return strconv.Itoa(seconds) + "s"
}

// selectScenarios keeps the scenarios named in a comma-separated list
// (all of them when the list is empty).
func selectScenarios(list string) ([]Scenario, error) {
	if list == "" {
		return scenarios, nil
	}
	known := append(append(append([]Scenario{}, scenarios...), moreScenarios...), webSocketScenarios...)
	var chosen []Scenario
	for _, name := range strings.Split(list, ",") {
		found := false
		for _, s := range known {
			if s.Name == strings.TrimSpace(name) {
				chosen = append(chosen, s)
				found = true
			}
		}
		if !found {
			var names []string
			for _, s := range known {
				names = append(names, s.Name)
			}
			return nil, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(names, ", "))
		}
	}
	return chosen, nil
}
