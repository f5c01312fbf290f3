package main

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/m0serve/m0serve/bench/internal/runinfo"
)

// Result is one harness run as written to bench/results/: where it ran,
// how, and every round's raw figures, so any table can be recomputed.
type Result struct {
	Mode string `json:"mode"`
	runinfo.Origin
	CPUModel   string `json:"cpu_model"`
	CPUs       int    `json:"cpus"`
	GoVersion  string `json:"go_version"`
	WrkVersion string `json:"wrk_version"`
	// M0serveVersion is `bin/m0serve --version`, which says what the
	// binary was built from and which backend features it chose.
	M0serveVersion string            `json:"m0serve_version,omitempty"`
	Peers          map[string]string `json:"peers"`
	Config         Config            `json:"config"`
	Arms           []ArmRecord       `json:"arms"`
	Scenarios      []Scenario        `json:"scenarios"`
	Runs           []Run             `json:"runs"`
	Summary        []Summary         `json:"summary"`
	Syscalls       []SyscallBudget   `json:"syscalls,omitempty"`
	TicksPerSec    float64           `json:"clock_ticks_per_second"`
	// LoadBefore and LoadAfter are /proc/loadavg around the whole run: on
	// a shared 2-core machine they say how much else was running.
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
}

// Config is how the run was made.
type Config struct {
	Rounds    int    `json:"rounds"`
	Duration  string `json:"duration"`
	Warmup    string `json:"warmup"`
	ServerCPU string `json:"server_cpu"`
	LoadCPU   string `json:"load_cpu"`
	Host      string `json:"host"`
	// ReloadEvery is -reload-every: SIGHUP sent this often in each run.
	ReloadEvery string `json:"reload_every,omitempty"`
}

// ArmRecord is an arm as it was run: its command, port and parity
// response, or why it was skipped or failed.
type ArmRecord struct {
	Arm
	Port   int     `json:"port,omitempty"`
	Parity *Parity `json:"parity,omitempty"`
	// WebSocketParity is the upgrade answer at WebSocketPath.
	WebSocketParity *Parity `json:"websocket_parity,omitempty"`
	// Version is the first line VersionCommand printed.
	Version string `json:"version,omitempty"`
	// Failed says why an arm that started stopped being measured.
	Failed string `json:"failed,omitempty"`
	// RunErrors lists the runs that gave no figure, and why.
	RunErrors   []string `json:"run_errors,omitempty"`
	errorsInRow int
}

// Run is one wrk run against one arm.
type Run struct {
	Scenario string `json:"scenario"`
	Arm      string `json:"arm"`
	Round    int    `json:"round"`
	WrkResult
	CPUTicks uint64 `json:"cpu_ticks"`
	// CPUusPerRequest is the server's utime+stime over the run divided by
	// the requests wrk completed.
	CPUusPerRequest float64 `json:"cpu_us_per_request"`
	// Cores is the server's CPU time over the wall time of the run: near
	// 1.0 the server was the bottleneck; well under it, wrk or another
	// process on the server's core was.
	Cores float64 `json:"cores"`
	// ClientCores is the load generator's (wrk's, or wsload's) CPU time
	// over the wall time of the run: near 1.0 on its one CPU, it was the
	// bottleneck, and a server that waits for requests pays a wake-up for
	// each few it gets.
	ClientCores float64 `json:"client_cores"`
	// VoluntarySwitchesPerRequest and InvoluntarySwitchesPerRequest are
	// the server's context switches (every thread's, from /proc) over the
	// run, per request: a handoff between threads shows in the first.
	VoluntarySwitchesPerRequest   float64 `json:"voluntary_switches_per_request"`
	InvoluntarySwitchesPerRequest float64 `json:"involuntary_switches_per_request"`
	// Load1 is the one-minute load average as the run started.
	Load1 float64 `json:"load1"`
	// Reloads is the SIGHUPs sent during the run (-reload-every).
	Reloads int `json:"reloads,omitempty"`
}

// collectEnvironment fills the fields that say where the run was made.
func collectEnvironment(r *Result, root, benchDir string) {
	r.Origin = runinfo.NewOrigin(root)
	r.CPUModel = cpuModel()
	r.CPUs = runtime.NumCPU()
	r.GoVersion = runinfo.CommandLine(root, "go", "env", "GOVERSION")
	r.WrkVersion, _, _ = strings.Cut(runinfo.CommandLine(root, "wrk", "-v"), " Copyright")
	if _, err := os.Stat(filepath.Join(root, "bin", "m0serve")); err == nil {
		r.M0serveVersion = runinfo.CommandLine(root, filepath.Join(root, "bin", "m0serve"), "--version")
	}
	r.Peers = map[string]string{
		"fasthttp": moduleVersion(filepath.Join(benchDir, "peers", "go.mod"), "github.com/valyala/fasthttp"),
		"nethttp":  "net/http of " + r.GoVersion,
		"floor":    "gcc -O2: " + runinfo.CommandLine(root, "gcc", "--version"),
	}
}

// load1 is the one-minute load average, 0 when unreadable.
func load1() float64 {
	first, _, _ := strings.Cut(runinfo.LoadAverage(), " ")
	v, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return 0
	}
	return v
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// moduleVersion reads the version a go.mod requires of a module.
func moduleVersion(goMod, module string) string {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return "unknown: " + err.Error()
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	return "not required in " + goMod
}
