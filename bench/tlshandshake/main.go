// Command tlshandshake measures servers' CPU per full TLS handshake (make
// bench-tls): for each server of the -arms file and each certificate
// given, it starts the server pinned to -server-cpu, makes -n connections
// from 8 goroutines with no session cache (every handshake a full one,
// where wrk resumes its sessions), each sending one request with
// Connection: close and reading the answer, and reads the server's
// utime+stime (its threads' and its descendants': Granian serves from a
// child process) from /proc either side. The servers, then the
// certificates, alternate within each of -rounds rounds; the medians and
// the first server's ratios to the others are printed and written to
// bench/results/tlshandshake-*.json.
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/m0serve/m0serve/bench/internal/runinfo"
)

// Result is what one run writes under bench/results.
type Result struct {
	runinfo.Origin
	Config     Config    `json:"config"`
	LoadBefore string    `json:"load_before"`
	LoadAfter  string    `json:"load_after"`
	Rounds     []Round   `json:"rounds"`
	Summary    []Summary `json:"summary"`
	Versions   []string  `json:"versions,omitempty"`
}

// Config is the run's shape.
type Config struct {
	Handshakes  int      `json:"handshakes_per_round"`
	Warmup      int      `json:"warmup_handshakes"`
	Rounds      int      `json:"rounds"`
	Concurrency int      `json:"concurrency"`
	Groups      string   `json:"key_exchange_groups"`
	ServerCPU   string   `json:"server_cpu"`
	Arms        []string `json:"arms"`
	Certs       []string `json:"certificates"`
}

// Round is one server with one certificate in one round.
type Round struct {
	Round      int     `json:"round"`
	Arm        string  `json:"arm"`
	Cert       string  `json:"cert"`
	Handshakes int     `json:"handshakes"`
	Ticks      uint64  `json:"server_ticks"`
	CPUus      float64 `json:"cpu_us_per_handshake"`
	Seconds    float64 `json:"seconds"`
	Load1      string  `json:"load"`
	Error      string  `json:"error,omitempty"`
}

// Summary is the median of an arm's rounds with one certificate.
type Summary struct {
	Arm          string  `json:"arm"`
	Cert         string  `json:"cert"`
	Rounds       int     `json:"rounds"`
	CPUus        float64 `json:"cpu_us_per_handshake"`
	PerCPUSecond float64 `json:"handshakes_per_cpu_second"`
}

// cert is one NAME CERT KEY triple of the command line.
type cert struct{ name, certFile, keyFile string }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tlshandshake:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 2000, "handshakes per server, certificate and round")
	rounds := flag.Int("rounds", 2, "rounds; the servers and certificates alternate within each")
	serverCPU := flag.String("server-cpu", "0", "taskset CPU list for the servers")
	port := flag.Int("port", 18470, "first port the servers listen on (one per server and certificate)")
	armsFile := flag.String("arms", "bench/tls-handshake-arms.json", "JSON list of servers: name and command, with {host}, {port}, {cert} and {key}")
	armList := flag.String("only", "", "comma-separated arm names to run, in this order (default all; the first is the one the ratios are for)")
	groups := flag.String("groups", "x25519", "key exchange groups the client offers: x25519 (what every server here has; uvicorn's OpenSSL 3.0 has no ML-KEM) or default (Go's, X25519MLKEM768 first)")
	results := flag.String("results", "bench/results", "where the JSON goes (empty: nowhere)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tlshandshake [flags] NAME CERT KEY [NAME CERT KEY...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || flag.NArg()%3 != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *n < concurrency || *rounds < 1 {
		return fmt.Errorf("-n %d -rounds %d: need at least %d handshakes and one round", *n, *rounds, concurrency)
	}
	config, err := clientConfig(*groups)
	if err != nil {
		return err
	}
	var certs []cert
	for i := 0; i < flag.NArg(); i += 3 {
		c := cert{flag.Arg(i), flag.Arg(i + 1), flag.Arg(i + 2)}
		// Absolute: a server may change directory before it loads them
		// (gunicorn's --chdir does).
		for _, p := range []*string{&c.certFile, &c.keyFile} {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return err
			}
			if _, err := os.Stat(abs); err != nil {
				return fmt.Errorf("certificate %s: %w", c.name, err)
			}
			*p = abs
		}
		certs = append(certs, c)
	}
	arms, err := loadArms(*armsFile)
	if err != nil {
		return err
	}
	if arms, err = selectArms(arms, *armList); err != nil {
		return err
	}
	root, err := runinfo.RepoRoot(filepath.Join("bench", "tls-handshake-arms.json"))
	if err != nil {
		return err
	}

	warmup := max(*n/10, concurrency)
	result := &Result{
		Origin: runinfo.NewOrigin(root),
		Config: Config{Handshakes: *n / concurrency * concurrency, Warmup: warmup, Rounds: *rounds, Concurrency: concurrency,
			Groups: *groups, ServerCPU: *serverCPU},
		LoadBefore: runinfo.LoadAverage(),
	}
	for _, arm := range arms {
		result.Config.Arms = append(result.Config.Arms, arm.Name)
		if len(arm.VersionCommand) > 0 {
			result.Versions = append(result.Versions, arm.Name+": "+runinfo.CommandLine(root, arm.VersionCommand[0], arm.VersionCommand[1:]...))
		}
	}
	for _, c := range certs {
		result.Config.Certs = append(result.Config.Certs, c.name)
	}
	fmt.Printf("load average %s; %d full handshakes a round (after %d unrecorded), %d at a time, client groups %s\n",
		result.LoadBefore, result.Config.Handshakes, warmup, concurrency, *groups)

	for r := 1; r <= *rounds; r++ {
		for ci, c := range certs {
			for ai, arm := range arms {
				p := *port + ai*len(certs) + ci
				round := Round{Round: r, Arm: arm.Name, Cert: c.name, Load1: runinfo.LoadAverage()}
				m, err := measure(root, arm, c, *serverCPU, p, *n, warmup, config)
				if err != nil {
					round.Error = err.Error()
					fmt.Printf("round %d %-18s %-6s failed: %v\n", r, arm.Name, c.name, err)
				} else {
					round.Handshakes, round.Ticks, round.Seconds = m.handshakes, m.ticks, m.seconds
					round.CPUus = m.cpuMicroseconds()
					fmt.Printf("round %d %-18s %-6s %d full handshakes: %6.0f µs of server CPU each, %5.0f per CPU-second (%.1f s, load %s)\n",
						r, arm.Name, c.name, m.handshakes, round.CPUus, 1e6/round.CPUus, m.seconds, round.Load1)
				}
				result.Rounds = append(result.Rounds, round)
			}
		}
	}
	result.LoadAfter = runinfo.LoadAverage()
	result.Summary = summarise(result.Rounds)
	printSummary(os.Stdout, result.Summary, arms, certs)
	fmt.Printf("\nload average before %s, after %s\n", result.LoadBefore, result.LoadAfter)
	if *results != "" {
		path, err := runinfo.WriteJSON(*results, "tlshandshake", time.Now(), result)
		if err != nil {
			return err
		}
		fmt.Printf("results: %s\n", path)
	}
	for _, s := range result.Summary {
		if s.Rounds > 0 {
			return nil
		}
	}
	return fmt.Errorf("no server produced a figure")
}

// concurrency is how many handshakes are under way at once.
const concurrency = 8

// clientConfig is the client's TLS: no session cache (so no resumption:
// every handshake signs with the server's key), no certificate check
// (the certificates are throwaway ones), HTTP/1.1 (no ALPN, as wrk).
func clientConfig(groups string) (*tls.Config, error) {
	config := &tls.Config{InsecureSkipVerify: true}
	switch groups {
	case "x25519":
		config.CurvePreferences = []tls.CurveID{tls.X25519}
	case "default":
	default:
		return nil, fmt.Errorf("-groups %q: x25519 or default", groups)
	}
	return config, nil
}

// Arm is one server: its name and its command line, where {host},
// {port}, {cert} and {key} are filled in.
type Arm struct {
	Name           string   `json:"name"`
	Command        []string `json:"command"`
	VersionCommand []string `json:"version_command,omitempty"`
}

// Argv is the command line for one certificate and port.
func (a Arm) Argv(host string, port int, c cert) []string {
	r := strings.NewReplacer("{host}", host, "{port}", fmt.Sprint(port), "{cert}", c.certFile, "{key}", c.keyFile)
	argv := make([]string, len(a.Command))
	for i, arg := range a.Command {
		argv[i] = r.Replace(arg)
	}
	return argv
}

func loadArms(path string) ([]Arm, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read arms: %w", err)
	}
	var arms []Arm
	if err := json.Unmarshal(data, &arms); err != nil {
		return nil, fmt.Errorf("parse arms %s: %w", path, err)
	}
	seen := map[string]bool{}
	for i, arm := range arms {
		if arm.Name == "" || len(arm.Command) == 0 {
			return nil, fmt.Errorf("arms %s: entry %d needs a name and a command", path, i)
		}
		if seen[arm.Name] {
			return nil, fmt.Errorf("arms %s: two arms named %q", path, arm.Name)
		}
		seen[arm.Name] = true
		joined := strings.Join(arm.Command, " ")
		for _, hole := range []string{"{port}", "{cert}", "{key}"} {
			if !strings.Contains(joined, hole) {
				return nil, fmt.Errorf("arms %s: %s's command lacks %s", path, arm.Name, hole)
			}
		}
	}
	return arms, nil
}

// selectArms keeps the named arms, in the list's order.
func selectArms(arms []Arm, list string) ([]Arm, error) {
	if list == "" {
		return arms, nil
	}
	var chosen []Arm
	for _, name := range strings.Split(list, ",") {
		found := false
		for _, arm := range arms {
			if arm.Name == strings.TrimSpace(name) {
				chosen = append(chosen, arm)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("-only: no arm %q", name)
		}
	}
	return chosen, nil
}
