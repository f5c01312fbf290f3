// Command harness is m0serve's whole-server benchmark: it starts m0serve
// and its peers (fasthttp, net/http, a C epoll floor) pinned to one CPU,
// drives each with wrk pinned to the other, alternating arms round by
// round, and records rps, latency and the server's CPU µs per request.
// See bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/bench/internal/runinfo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func run() error {
	quick := flag.Bool("quick", false, "smoke check: 2 rounds of 1 s per arm and scenario (under 2 minutes)")
	syscalls := flag.Bool("syscalls", false, "syscall budget: strace -f -c over one keep-alive run per arm, calls per request")
	rounds := flag.Int("rounds", 3, "rounds per scenario; the arms alternate within each")
	duration := flag.Duration("duration", 5*time.Second, "length of each measured wrk run (whole seconds)")
	warmup := flag.Duration("warmup", 2*time.Second, "length of the unrecorded run per arm before each scenario")
	armList := flag.String("arms", "", "comma-separated arm names to run (default all)")
	scenarioList := flag.String("scenarios", "", "comma-separated scenarios: c16,c256,c16-close,c16-pipe16 (default all); also c1,c4,c64 and make bench-ws's ws-c1,ws-c16,ws-c256,ws-broadcast16,ws-broadcast256")
	extraArms := flag.String("extra-arms", "", "JSON file of further arms (see Arm in harness/arm.go), e.g. Python servers")
	native := flag.Bool("native", true, "run the built-in arms (m0serve --native hello and the Go and C peers); -native=false with -extra-arms runs only the file's arms")
	host := flag.String("host", "127.0.0.1", "loopback address the servers listen on")
	portBase := flag.Int("port-base", 18080, "first port; each arm takes the next free one")
	serverCPU := flag.String("server-cpu", "0", "taskset CPU list for the servers")
	loadCPU := flag.String("load-cpu", "1", "taskset CPU list for wrk")
	results := flag.String("results", "", "results directory (default bench/results)")
	reloadEvery := flag.Duration("reload-every", 0, "send each server SIGHUP this often during every measured run (a rolling reload under load; 0: never)")
	flag.Parse()

	if *quick {
		*rounds, *duration, *warmup = 2, time.Second, time.Second
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: need at least one", *rounds)
	}
	if !strings.HasPrefix(*host, "127.") && *host != "::1" && *host != "localhost" {
		return fmt.Errorf("-host %s: benchmarks target loopback only", *host)
	}
	for _, tool := range []string{"wrk", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not on PATH (make bench installs it): %w", tool, err)
		}
	}
	if *syscalls {
		if _, err := exec.LookPath("strace"); err != nil {
			return fmt.Errorf("strace not on PATH (make bench installs it): %w", err)
		}
	}
	chosen, err := selectScenarios(*scenarioList)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, benchDir, err := locate()
	if err != nil {
		return err
	}
	if *results == "" {
		*results = filepath.Join(benchDir, "results")
	}
	logDir, err := os.MkdirTemp("", "m0bench-")
	if err != nil {
		return fmt.Errorf("log dir: %w", err)
	}

	if !*native && *extraArms == "" {
		return fmt.Errorf("-native=false leaves no arm without -extra-arms")
	}
	var arms []Arm
	if *native {
		logf("building peers")
		arms = nativeArms(ctx, root, benchDir, buildPeers(ctx, benchDir))
	}
	if *extraArms != "" {
		more, err := LoadArms(*extraArms)
		if err != nil {
			return err
		}
		arms = append(arms, more...)
	}
	if err := uniqueNames(arms); err != nil {
		return err
	}
	arms, err = selectArms(arms, *armList)
	if err != nil {
		return err
	}

	wsload := ""
	for _, scenario := range chosen {
		if scenario.WebSocket != "" && wsload == "" {
			logf("building wsload")
			if wsload, err = buildWSLoad(ctx, benchDir, logDir); err != nil {
				return err
			}
		}
	}

	session := &Session{
		Root: root, Host: *host,
		ServerCPU: *serverCPU, LoadCPU: *loadCPU,
		Clock: newCPUClock(), LogDir: logDir,
		PipelineScript: filepath.Join(benchDir, "pipeline.lua"),
		PostScript:     filepath.Join(benchDir, "post.lua"),
		WSLoad:         wsload,
		Log:            logf,
		ReloadEvery:    *reloadEvery,
	}
	result := &Result{
		Mode: "full",
		Config: Config{Rounds: *rounds, Duration: wrkDuration(*duration), Warmup: wrkDuration(*warmup),
			ServerCPU: *serverCPU, LoadCPU: *loadCPU, Host: *host},
		TicksPerSec: session.Clock.TicksPerSecond,
	}
	if *reloadEvery > 0 {
		result.Config.ReloadEvery = reloadEvery.String()
	}
	switch {
	case *syscalls:
		result.Mode = "syscalls"
	case *quick:
		result.Mode = "quick"
	}
	if wsload != "" {
		result.Mode = "ws-" + result.Mode
	}
	collectEnvironment(result, root, benchDir)
	result.LoadBefore = runinfo.LoadAverage()
	logf("server logs in %s; load average %s", logDir, result.LoadBefore)

	session.Start(arms, *portBase)
	defer session.Stop()

	if *syscalls {
		keepAlive := scenarios[0]
		if *scenarioList != "" {
			keepAlive = chosen[0] // -scenarios c1: the budget at one connection
		}
		result.Scenarios = []Scenario{keepAlive}
		result.Syscalls = session.MeasureSyscalls(ctx, keepAlive, *duration, *warmup)
		printSyscalls(os.Stdout, result.Syscalls)
	} else {
		result.Scenarios = chosen
		result.Runs, err = session.Measure(ctx, chosen, *rounds, *duration, *warmup)
		result.Summary = summarise(result.Runs)
		printResponses(os.Stdout, session.Records)
		printTable(os.Stdout, chosen, session.Records, result.Summary)
	}
	result.LoadAfter = runinfo.LoadAverage()
	fmt.Printf("\nload average before %s, after %s (the servers and wrk add about 2 while they run; more is other work on the machine)\n",
		result.LoadBefore, result.LoadAfter)
	for _, record := range session.Records {
		result.Arms = append(result.Arms, *record)
	}
	path, writeErr := runinfo.WriteJSON(*results, "harness-"+result.Mode, time.Now(), result)
	if writeErr != nil {
		return writeErr
	}
	fmt.Printf("\nresults: %s\n", path)
	if err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	if len(result.Runs) == 0 && len(result.Syscalls) == 0 {
		return fmt.Errorf("no arm produced figures")
	}
	return nil
}

// locate finds the repository root and bench/ from where the harness runs
// (bench/, as `make bench` runs it, or the root).
func locate() (root, benchDir string, err error) {
	root, err = runinfo.RepoRoot(filepath.Join("bench", "pipeline.lua"))
	return root, filepath.Join(root, "bench"), err
}

// selectArms keeps the arms named in a comma-separated list, in list
// order (all of them when the list is empty).
func selectArms(arms []Arm, list string) ([]Arm, error) {
	if list == "" {
		return arms, nil
	}
	var chosen []Arm
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, arm := range arms {
			if arm.Name == name {
				chosen = append(chosen, arm)
				found = true
			}
		}
		if !found {
			var names []string
			for _, arm := range arms {
				names = append(names, arm.Name)
			}
			return nil, fmt.Errorf("unknown arm %q (have %s)", name, strings.Join(names, ", "))
		}
	}
	return chosen, nil
}
