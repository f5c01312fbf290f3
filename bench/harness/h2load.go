package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runH2load is one h2load run against an HTTP/2 arm (make bench-h2),
// pinned like wrk, with the server's CPU time read either side: h2c by
// prior knowledge, or h2 by ALPN over TLS.
func (s *Session) runH2load(ctx context.Context, scenario Scenario, record *ArmRecord, server *Server, duration time.Duration) (Run, error) {
	scheme := "http://"
	if record.TLS {
		scheme = "https://"
	}
	url := scheme + server.Addr(s.Host) + record.Target()
	runCtx, cancel := context.WithTimeout(ctx, duration+30*time.Second)
	defer cancel()
	before, err := s.Clock.Ticks(server.Pid())
	if err != nil {
		return Run{}, err
	}
	switchesBefore := s.Clock.Switches(server.Pid())
	load := load1()
	started := time.Now()
	client := exec.CommandContext(runCtx, "taskset", "-c", s.LoadCPU, "h2load", "-t1",
		"-c"+strconv.Itoa(scenario.Connections), "-m"+strconv.Itoa(scenario.H2Streams),
		"-D", strconv.Itoa(max(int(duration.Round(time.Second)/time.Second), 1)), url)
	out, err := client.CombinedOutput()
	wall := time.Since(started)
	after, tickErr := s.Clock.Ticks(server.Pid())
	switchesAfter := s.Clock.Switches(server.Pid())
	if err != nil {
		return Run{}, fmt.Errorf("h2load: %v: %s", err, lastLines(string(out), 3))
	}
	if tickErr != nil {
		return Run{}, tickErr
	}
	result, err := parseH2load(string(out))
	if err != nil {
		return Run{}, err
	}
	if result.Requests == 0 {
		return Run{}, fmt.Errorf("h2load completed no requests: %s", lastLines(string(out), 3))
	}
	ticks := after - before
	cpu := s.Clock.Microseconds(ticks)
	return Run{
		Scenario:                      scenario.Name,
		Arm:                           record.Name,
		WrkResult:                     result,
		CPUTicks:                      ticks,
		CPUusPerRequest:               cpu / float64(result.Requests),
		Cores:                         cpu / float64(wall.Microseconds()),
		VoluntarySwitchesPerRequest:   float64(switchesAfter.Voluntary-switchesBefore.Voluntary) / float64(result.Requests),
		InvoluntarySwitchesPerRequest: float64(switchesAfter.Involuntary-switchesBefore.Involuntary) / float64(result.Requests),
		ClientCores:                   clientCores(client.ProcessState, wall),
		Load1:                         load,
	}, nil
}

// parseH2load reads h2load's report (nghttp2 1.5x): "finished in 2.00s,
// 12345.67 req/s, ..." and "requests: N total, N started, N done, N
// succeeded, F failed, E errored, T timeout". h2load reports a mean
// request time, not percentiles: p50 and p99 stay 0, with a note.
func parseH2load(out string) (WrkResult, error) {
	var r WrkResult
	var haveFinished, haveRequests bool
	var failed, errored, timedOut int64
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		fields := strings.Fields(strings.NewReplacer(",", " ").Replace(line))
		switch {
		case strings.HasPrefix(line, "finished in ") && len(fields) >= 5:
			seconds, err := parseSeconds(fields[2])
			if err != nil {
				return r, err
			}
			rps, err := strconv.ParseFloat(fields[3], 64)
			if err != nil {
				return r, fmt.Errorf("h2load rate %q: %w", fields[3], err)
			}
			r.Seconds, r.RPS, haveFinished = seconds, rps, true
		case strings.HasPrefix(line, "requests: ") && len(fields) >= 13:
			var err error
			if r.Requests, err = strconv.ParseInt(fields[7], 10, 64); err != nil { // succeeded
				return r, fmt.Errorf("h2load requests %q: %w", line, err)
			}
			failed, _ = strconv.ParseInt(fields[9], 10, 64)
			errored, _ = strconv.ParseInt(fields[11], 10, 64)
			timedOut, _ = strconv.ParseInt(fields[13], 10, 64)
			haveRequests = true
		case strings.HasPrefix(line, "status codes: ") && len(fields) >= 10:
			for i := 2; i+1 < len(fields); i += 2 {
				if fields[i+1] != "2xx" {
					n, _ := strconv.ParseInt(fields[i], 10, 64)
					r.Non2xx += n
				}
			}
		}
	}
	if !haveFinished || !haveRequests {
		return r, fmt.Errorf("h2load report without its totals: %s", lastLines(out, 3))
	}
	if failed+errored+timedOut > 0 {
		r.SocketErrors = fmt.Sprintf("failed %d, errored %d, timeout %d", failed, errored, timedOut)
	}
	r.LatencyNote = "h2load reports no percentiles"
	return r, nil
}
