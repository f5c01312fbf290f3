package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/bench/internal/runinfo"
)

// Session holds the running arms of one harness run.
type Session struct {
	Root           string
	Host           string
	ServerCPU      string // taskset list for the servers
	LoadCPU        string // taskset list for wrk
	Clock          CPUClock
	LogDir         string
	PipelineScript string
	// PostScript is post.lua: wrk POSTs a file's bytes on every request.
	PostScript string
	// WSLoad is the wsload binary that drives the WebSocket scenarios.
	WSLoad string
	Log    func(format string, args ...any)
	// ReloadEvery, when set, sends the server SIGHUP this often during
	// each measured run (a rolling reload: errors are what is measured).
	ReloadEvery time.Duration

	Records []*ArmRecord
	servers map[string]*Server
}

// Start launches every arm that can run, each on its own port from
// portBase up, and checks its response before anything is measured.
func (s *Session) Start(arms []Arm, portBase int) {
	s.servers = map[string]*Server{}
	port := portBase
	for _, arm := range arms {
		record := &ArmRecord{Arm: arm}
		s.Records = append(s.Records, record)
		if record.SkipReason == "" {
			record.SkipReason = arm.Missing(s.Root)
		}
		if record.SkipReason != "" {
			s.Log("skip %s: %s", arm.Name, record.SkipReason)
			continue
		}
		if len(arm.VersionCommand) > 0 {
			record.Version = runinfo.CommandLine(s.Root, arm.VersionCommand[0], arm.VersionCommand[1:]...)
		}
		for !portFree(s.Host, port) {
			port++
		}
		record.Port = port
		port++
		server, err := startServer(arm, s.Root, s.Host, record.Port, s.ServerCPU,
			filepath.Join(s.LogDir, arm.Name+".log"))
		if err != nil {
			record.Failed = err.Error()
			s.Log("fail %s: %v", arm.Name, err)
			continue
		}
		if err := server.WaitReady(s.Host, 15*time.Second); err != nil {
			server.Stop(3 * time.Second)
			record.Failed = err.Error()
			s.Log("fail %s: %v", arm.Name, err)
			continue
		}
		// Generous: a framework's first request imports lazily, and a
		// busy machine makes that seconds.
		parity, err := checkArmParity(server.Addr(s.Host), arm, 30*time.Second)
		record.Parity = &parity
		if err != nil {
			server.Stop(3 * time.Second)
			record.Failed = err.Error()
			s.Log("fail %s: %v", arm.Name, err)
			continue
		}
		if arm.WebSocketPath != "" {
			record.WebSocketParity, err = checkWebSocketParity(server.Addr(s.Host), arm, 5*time.Second)
			if err != nil {
				server.Stop(3 * time.Second)
				record.Failed = err.Error()
				s.Log("fail %s: %v", arm.Name, err)
				continue
			}
		}
		s.servers[arm.Name] = server
		s.Log("ready %s on port %d (pid %d, %d-byte response)", arm.Name, record.Port, server.Pid(), parity.ResponseBytes)
	}
}

// Stop ends every server the session started.
func (s *Session) Stop() {
	for _, server := range s.servers {
		server.Stop(3 * time.Second)
	}
}

// live is the arms still being measured, in arm order.
func (s *Session) live() []*ArmRecord {
	return s.liveIn(nil)
}

// liveIn is the arms still being measured that run in scenario (all of
// them when it is nil).
func (s *Session) liveIn(scenario *Scenario) []*ArmRecord {
	var live []*ArmRecord
	for _, record := range s.Records {
		if scenario != nil && !record.Applies(*scenario) {
			continue
		}
		if _, ok := s.servers[record.Name]; ok && record.Failed == "" {
			live = append(live, record)
		}
	}
	return live
}

// fail takes an arm out of the measurement for the rest of the run.
func (s *Session) fail(record *ArmRecord, err error) {
	record.Failed = err.Error()
	s.Log("fail %s: %v", record.Name, err)
	if server, ok := s.servers[record.Name]; ok {
		server.Stop(3 * time.Second)
	}
}

// maxRunErrors is how many runs in a row may go wrong (wrk completing
// nothing while a busy machine starves the server, say) before an arm is
// taken out; a server that has exited is taken out at once.
const maxRunErrors = 3

// runFailed records a run that produced no figure and says whether the
// arm stays in.
func (s *Session) runFailed(record *ArmRecord, what string, err error) bool {
	record.RunErrors = append(record.RunErrors, what+": "+err.Error())
	record.errorsInRow++
	server := s.servers[record.Name]
	if !server.Alive() || record.errorsInRow >= maxRunErrors {
		s.fail(record, fmt.Errorf("%s: %w", what, err))
		return false
	}
	s.Log("  %-14s %s: no figure: %v", record.Name, what, err)
	return true
}

// Measure runs every scenario: a warm-up per arm, then rounds in which the
// arms take turns (A B C D A B C D ...), so drift in the machine's load
// lands on every arm rather than on whichever ran last.
func (s *Session) Measure(ctx context.Context, chosen []Scenario, rounds int, duration, warmup time.Duration) ([]Run, error) {
	var runs []Run
	for _, scenario := range chosen {
		s.Log("scenario %s: %s", scenario.Name, scenario.Describe())
		for _, record := range s.liveIn(&scenario) {
			if _, err := s.runOnce(ctx, scenario, record, warmup); err != nil {
				if ctx.Err() != nil {
					return runs, ctx.Err()
				}
				s.runFailed(record, "warm-up "+scenario.Name, err)
			}
		}
		for round := 1; round <= rounds; round++ {
			for _, record := range s.liveIn(&scenario) {
				run, err := s.runOnce(ctx, scenario, record, duration)
				if err != nil {
					if ctx.Err() != nil {
						return runs, ctx.Err()
					}
					s.runFailed(record, fmt.Sprintf("%s round %d", scenario.Name, round), err)
					continue
				}
				record.errorsInRow = 0
				run.Round = round
				runs = append(runs, run)
				note := errorNote(run.WrkResult)
				if s.ReloadEvery > 0 {
					note = fmt.Sprintf("  %d reloads%s", run.Reloads, note)
				}
				s.Log("  %-14s round %d: %9.0f rps  p50 %7.0f µs  p99 %7.0f µs  %6.2f µs/req  %.2f cores  client %.2f  load %.1f%s",
					record.Name, round, run.RPS, run.P50us, run.P99us, run.CPUusPerRequest, run.Cores, run.ClientCores, run.Load1, note)
			}
		}
	}
	return runs, nil
}

// runOnce is one wrk run with the server's CPU time read either side.
func (s *Session) runOnce(ctx context.Context, scenario Scenario, record *ArmRecord, duration time.Duration) (Run, error) {
	server := s.servers[record.Name]
	if !server.Alive() {
		return Run{}, fmt.Errorf("server exited: %s", server.LogTail())
	}
	if scenario.WebSocket != "" && record.WebSocketPath != "" {
		return s.runWebSocket(ctx, scenario, record, server, duration)
	}
	if scenario.H2Streams > 0 && record.HTTP2 {
		return s.runH2load(ctx, scenario, record, server, duration)
	}
	scheme := "http://"
	if record.TLS {
		scheme = "https://"
	}
	url := scheme + server.Addr(s.Host) + record.Target()
	wrkArgs := scenario.WrkArgs(url, duration, s.PipelineScript)
	if record.Posts() {
		body, err := s.bodyFile(record)
		if err != nil {
			return Run{}, err
		}
		// The URL is last (Applies keeps POST arms out of the pipelined
		// scenario); post.lua reads the body from the file once.
		wrkArgs = append(wrkArgs[:len(wrkArgs)-1], "-s", s.PostScript, url, "--", body, record.ContentType)
	}
	args := append([]string{"-c", s.LoadCPU, "wrk"}, wrkArgs...)
	// wrk stops itself after -d; the context bounds a wrk that hangs.
	runCtx, cancel := context.WithTimeout(ctx, duration+30*time.Second)
	defer cancel()
	before, err := s.Clock.Ticks(server.Pid())
	if err != nil {
		return Run{}, err
	}
	switchesBefore := s.Clock.Switches(server.Pid())
	load := load1()
	started := time.Now()
	stopReloads := s.reloadDuring(server)
	client := exec.CommandContext(runCtx, "taskset", args...)
	out, err := client.CombinedOutput()
	wall := time.Since(started)
	reloads := stopReloads()
	after, tickErr := s.Clock.Ticks(server.Pid())
	switchesAfter := s.Clock.Switches(server.Pid())
	if err != nil {
		return Run{}, fmt.Errorf("wrk: %v: %s", err, lastLines(string(out), 3))
	}
	if tickErr != nil {
		return Run{}, tickErr
	}
	result, err := parseWrk(string(out))
	if err != nil {
		return Run{}, err
	}
	if result.Requests == 0 {
		return Run{}, fmt.Errorf("wrk completed no requests: %s", lastLines(string(out), 3))
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
		Reloads:                       reloads,
	}, nil
}

// clientCores is wrk's CPU time over the run's wall time (Run.ClientCores);
// taskset execs wrk, so the process state is wrk's own.
func clientCores(state *os.ProcessState, wall time.Duration) float64 {
	if state == nil || wall <= 0 {
		return 0
	}
	return float64(state.UserTime()+state.SystemTime()) / float64(wall)
}

// reloadDuring sends server SIGHUP every ReloadEvery until the returned
// function is called, which says how many were sent.
func (s *Session) reloadDuring(server *Server) func() int {
	if s.ReloadEvery <= 0 {
		return func() int { return 0 }
	}
	done := make(chan struct{})
	sent := make(chan int)
	go func() {
		n := 0
		tick := time.NewTicker(s.ReloadEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if syscall.Kill(server.Pid(), syscall.SIGHUP) == nil {
					n++
				}
			case <-done:
				sent <- n
				return
			}
		}
	}()
	return func() int {
		close(done)
		return <-sent
	}
}

// errorNote flags a run in which wrk saw errors.
func errorNote(r WrkResult) string {
	note := ""
	if r.SocketErrors != "" {
		note += "  socket errors: " + r.SocketErrors
	}
	if r.Non2xx != 0 {
		note += fmt.Sprintf("  non-2xx: %d", r.Non2xx)
	}
	if r.LatencyNote != "" {
		note += "  (" + r.LatencyNote + ")"
	}
	return note
}

// logf prints a progress line to stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "harness: "+format+"\n", args...)
}

// bodyFile writes a POST arm's request body to the session's log
// directory once and returns its path, for post.lua.
func (s *Session) bodyFile(record *ArmRecord) (string, error) {
	path := filepath.Join(s.LogDir, record.Name+".body")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.WriteFile(path, record.RequestBody(), 0o644); err != nil {
		return "", fmt.Errorf("writing %s's request body: %w", record.Name, err)
	}
	return path, nil
}
