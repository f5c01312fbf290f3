package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/bench/wsclient"
)

// buildWSLoad builds the WebSocket load client into dir. go build is
// cached, so building on every run costs little.
func buildWSLoad(ctx context.Context, benchDir, dir string) (string, error) {
	binary := filepath.Join(dir, "wsload")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", binary, "./wsload")
	cmd.Dir = benchDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build wsload: %v: %s", err, lastLines(string(out), 3))
	}
	return binary, nil
}

// runWebSocket is one wsload run, pinned like wrk, with the server's CPU
// read once every connection is up and again once the last message has
// arrived: the upgrades and the closes are not in the figure, and every
// message the server handled in between is counted (wsload drains what
// is in flight before it reports).
func (s *Session) runWebSocket(ctx context.Context, scenario Scenario, record *ArmRecord, server *Server, duration time.Duration) (Run, error) {
	path := record.WebSocketPath
	if scenario.WebSocket == "broadcast" {
		path = record.BroadcastPath
	}
	// The connections, the run and the drain; more than wrk's margin, as
	// 256 upgrades through a starved Python server take a while.
	runCtx, cancel := context.WithTimeout(ctx, duration+60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "taskset", "-c", s.LoadCPU, s.WSLoad, "-control",
		"-addr", server.Addr(s.Host), "-path", path, "-mode", scenario.WebSocket,
		"-c", strconv.Itoa(scenario.Connections), "-d", duration.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Run{}, fmt.Errorf("wsload stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Run{}, fmt.Errorf("wsload stdout: %w", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return Run{}, fmt.Errorf("start wsload: %w", err)
	}
	// Every way out ends wsload: closing stdin lets it close its
	// connections and exit; the context kills one that hangs.
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	failed := func(what string) error {
		stdin.Close()
		cmd.Wait() // stderr is complete once wsload has exited
		return fmt.Errorf("wsload %s: %s", what, lastLines(stderr.String(), 3))
	}
	if !lines.Scan() || lines.Text() != "connected" {
		return Run{}, failed("did not connect")
	}
	before, err := s.Clock.Ticks(server.Pid())
	if err != nil {
		return Run{}, err
	}
	clientBefore, clientErr := s.Clock.Ticks(cmd.Process.Pid)
	load := load1()
	started := time.Now()
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		return Run{}, fmt.Errorf("start wsload's run: %w", err)
	}
	if !lines.Scan() {
		return Run{}, failed("ended without a result")
	}
	wall := time.Since(started)
	clientAfter, err := s.Clock.Ticks(cmd.Process.Pid)
	if err != nil || clientErr != nil || clientAfter < clientBefore {
		clientAfter = clientBefore // not known: shown as 0
	}
	after, err := s.Clock.Ticks(server.Pid())
	if err != nil {
		return Run{}, err
	}
	var result wsclient.LoadResult
	if err := json.Unmarshal(lines.Bytes(), &result); err != nil {
		return Run{}, fmt.Errorf("wsload result %q: %w", lines.Text(), err)
	}
	if result.Messages == 0 {
		return Run{}, fmt.Errorf("wsload delivered no messages")
	}
	ticks := after - before
	cpu := s.Clock.Microseconds(ticks)
	return Run{
		Scenario: scenario.Name,
		Arm:      record.Name,
		WrkResult: WrkResult{
			Requests: result.Messages, Seconds: result.Seconds, RPS: result.MessagesPerSecond,
			P50us: result.P50us, P99us: result.P99us,
		},
		CPUTicks:        ticks,
		CPUusPerRequest: cpu / float64(result.Messages),
		Cores:           cpu / float64(wall.Microseconds()),
		ClientCores:     s.Clock.Microseconds(clientAfter-clientBefore) / float64(wall.Microseconds()),
		Load1:           load,
	}, nil
}

// checkWebSocketParity upgrades at the arm's WebSocket path and requires
// one message echoed back unchanged (and, where the arm broadcasts, a
// lone client's message sent back to it).
func checkWebSocketParity(addr string, arm Arm, timeout time.Duration) (*Parity, error) {
	conn, handshake, err := wsclient.Dial(addr, arm.WebSocketPath, timeout)
	if err != nil {
		return nil, fmt.Errorf("websocket parity: %w", err)
	}
	defer conn.Close()
	parity := &Parity{Status: handshake.Status, ResponseBytes: handshake.ResponseBytes, HeaderOrder: handshake.HeaderOrder}
	if err := roundTrip(conn, timeout); err != nil {
		return parity, fmt.Errorf("websocket parity at %s: %w", arm.WebSocketPath, err)
	}
	if arm.BroadcastPath != "" {
		lone, _, err := wsclient.Dial(addr, arm.BroadcastPath, timeout)
		if err != nil {
			return parity, fmt.Errorf("websocket parity: %w", err)
		}
		defer lone.Close()
		if err := roundTrip(lone, timeout); err != nil {
			return parity, fmt.Errorf("websocket parity at %s: %w", arm.BroadcastPath, err)
		}
	}
	return parity, nil
}

// roundTrip sends one text message and requires it back.
func roundTrip(conn *wsclient.Conn, timeout time.Duration) error {
	conn.Prepare(wsclient.OpText, []byte("parity"))
	if err := conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if err := conn.Send(); err != nil {
		return err
	}
	opcode, payload, err := conn.ReadMessage()
	if err != nil {
		return err
	}
	if opcode != wsclient.OpText || string(payload) != "parity" {
		return fmt.Errorf("sent text %q, got opcode %d %q", "parity", opcode, payload)
	}
	return nil
}
