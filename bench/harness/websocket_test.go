package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWebSocketScenariosPickTheirArms(t *testing.T) {
	http := Arm{Name: "hello"}
	echo := Arm{Name: "ws-echo", WebSocketPath: "/"}
	both := Arm{Name: "asgi", WebSocketPath: "/", BroadcastPath: "/broadcast"}
	chosen, err := selectScenarios("c16,ws-c16,ws-broadcast16")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]bool{ // hello, ws-echo, asgi
		"c16":            {true, false, false},
		"ws-c16":         {true, true, true},
		"ws-broadcast16": {false, false, true},
	}
	for _, scenario := range chosen {
		got := [3]bool{http.Applies(scenario), echo.Applies(scenario), both.Applies(scenario)}
		if got != want[scenario.Name] {
			t.Errorf("%s: hello, ws-echo, asgi apply %v, want %v", scenario.Name, got, want[scenario.Name])
		}
	}
}

func TestWebSocketTableListsOnlyTheArmsThatRan(t *testing.T) {
	chosen, err := selectScenarios("ws-c16,ws-broadcast16")
	if err != nil {
		t.Fatal(err)
	}
	records := []*ArmRecord{
		{Arm: Arm{Name: "m0serve-asgi", WebSocketPath: "/", BroadcastPath: "/b", Group: "asgi"}},
		{Arm: Arm{Name: "uvicorn-websockets", WebSocketPath: "/", BroadcastPath: "/b", Group: "asgi", Peer: true}},
		{Arm: Arm{Name: "hello", Group: "native", Peer: true}},
	}
	summaries := []Summary{
		{Scenario: "ws-c16", Arm: "m0serve-asgi", RPS: 200, CPUusPerRequest: 10},
		{Scenario: "ws-c16", Arm: "uvicorn-websockets", RPS: 100, CPUusPerRequest: 40},
		{Scenario: "ws-c16", Arm: "hello", RPS: 300, CPUusPerRequest: 5},
		{Scenario: "ws-broadcast16", Arm: "m0serve-asgi", RPS: 400, CPUusPerRequest: 8},
		{Scenario: "ws-broadcast16", Arm: "uvicorn-websockets", RPS: 100, CPUusPerRequest: 16},
	}
	var out bytes.Buffer
	printTable(&out, chosen, records, summaries)
	text := out.String()
	broadcast := text[strings.Index(text, "ws-broadcast16 ("):]
	for _, want := range []string{"msg/s", "µs/msg", "vs uvicorn-websockets", "2.00/0.25", "4.00/0.50", "Granian"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(broadcast, "hello") {
		t.Errorf("the HTTP arm is listed in the broadcast scenario:\n%s", broadcast)
	}
	if !strings.Contains(text[:len(text)-len(broadcast)], "hello") {
		t.Errorf("the HTTP arm is missing from the echo scenario:\n%s", text)
	}
}

// TestWebSocketRunsCountEveryMessage drives a WebSocket server of
// another implementation (python3-websockets, testdata of wsclient)
// with wsload through the harness: parity, then an echo and a broadcast
// run, whose figures must add up.
func TestWebSocketRunsCountEveryMessage(t *testing.T) {
	dir := t.TempDir()
	benchDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	wsload, err := buildWSLoad(context.Background(), benchDir, dir)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	arm := Arm{Name: "websockets", WebSocketPath: "/echo", BroadcastPath: "/broadcast",
		Command: []string{"/usr/bin/python3", filepath.Join(benchDir, "wsclient", "testdata", "server.py"), "{port}"}}
	server, err := startServer(arm, benchDir, "127.0.0.1", port, "0-1", filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Stop(3 * time.Second) })
	if err := server.WaitReady("127.0.0.1", 30*time.Second); err != nil {
		t.Fatalf("%v (make packages-test installs python3-websockets)", err)
	}
	parity, err := checkWebSocketParity(server.Addr("127.0.0.1"), arm, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if parity.Status != 101 {
		t.Errorf("parity status %d, want 101", parity.Status)
	}

	record := &ArmRecord{Arm: arm}
	session := &Session{Host: "127.0.0.1", LoadCPU: "0-1", Clock: newCPUClock(), WSLoad: wsload, Log: t.Logf,
		Records: []*ArmRecord{record}, servers: map[string]*Server{arm.Name: server}}
	for _, scenario := range []Scenario{
		{Name: "ws-c4", Connections: 4, WebSocket: "echo"},
		{Name: "ws-broadcast4", Connections: 4, WebSocket: "broadcast"},
	} {
		run, err := session.runOnce(context.Background(), scenario, record, 500*time.Millisecond)
		if err != nil {
			t.Fatalf("%s: %v", scenario.Name, err)
		}
		if run.Scenario != scenario.Name || run.Arm != arm.Name || run.Requests == 0 || run.RPS <= 0 || run.Seconds <= 0 {
			t.Errorf("%s: run %+v, want messages, a rate and a length", scenario.Name, run)
		}
		if scenario.WebSocket == "echo" && run.P50us <= 0 {
			t.Errorf("%s: no echo latency in %+v", scenario.Name, run)
		}
		// Every message sent reaches all four clients.
		if scenario.WebSocket == "broadcast" && run.Requests%4 != 0 {
			t.Errorf("%s: %d messages delivered, not a multiple of the 4 clients", scenario.Name, run.Requests)
		}
	}
}
