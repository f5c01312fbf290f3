// Command reliability is `make bench-reliability`: the attack campaign of
// issue 15 run against the real bin/m0serve and, where a probe applies,
// against Debian's uvicorn and gunicorn with their defaults, in one run:
// slowloris, idle connections' memory on both backends, slow readers and
// slow bodies against one handler thread, 2 GiB uploads, a soak per
// interface and mutated requests. Loopback only; every step is bounded in
// time. It prints a table and writes a JSON under bench/results/ (see
// bench/README.md, Reliability).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/bench/internal/runinfo"
)

// Config is the campaign's size: the full run's by default, -quick's
// smoke version otherwise.
type Config struct {
	Quick bool   `json:"quick"`
	Host  string `json:"host"`
	// Window is each latency measurement (the baseline and every attack);
	// the normal client sends a request every Interval and gives up on
	// one after ClientTimeout (an error).
	Window         time.Duration `json:"window_ns"`
	Interval       time.Duration `json:"interval_ns"`
	ClientTimeout  time.Duration `json:"client_timeout_ns"`
	SlowlorisConns int           `json:"slowloris_connections"`
	SlowClients    int           `json:"slow_clients"`
	IdleConns      int           `json:"idle_connections"`
	UploadBytes    int64         `json:"upload_bytes"`
	UploadLimit    time.Duration `json:"upload_limit_ns"`
	SoakWarmup     int64         `json:"soak_warmup_requests"`
	SoakRequests   int64         `json:"soak_requests"`
	SoakConns      int           `json:"soak_connections"`
	SoakLimit      time.Duration `json:"soak_limit_ns"`
	FuzzTime       time.Duration `json:"fuzz_duration_ns"`
	FuzzWorkers    int           `json:"fuzz_connections"`
	FuzzQuiet      time.Duration `json:"fuzz_quiet_ns"`
	FuzzSeed       uint64        `json:"fuzz_seed"`
	Probes         []string      `json:"probes"`
}

func (c Config) wants(probe string) bool {
	for _, p := range c.Probes {
		if p == probe {
			return true
		}
	}
	return false
}

var allProbes = []string{"slowloris", "slow-readers", "slow-bodies", "slow-bodies-1M", "idle", "upload", "soak", "fuzz"}

// Row is one probe against one target.
type Row struct {
	Probe   string `json:"probe"`
	Target  string `json:"target"`
	Skipped string `json:"skipped,omitempty"`
	Failed  string `json:"failed,omitempty"`
	Note    string `json:"note,omitempty"`
	// The latency probes: the normal client before and during the attack.
	Baseline      *Latency `json:"baseline,omitempty"`
	Attack        *Latency `json:"attack,omitempty"`
	Attackers     int      `json:"attackers,omitempty"`
	AttackersOpen int      `json:"attackers_open_at_end,omitempty"`
	Reconnects    int      `json:"attackers_reopened,omitempty"`
	// The memory probes (bytes of VmRSS, the server's processes summed).
	RSSBase            int64        `json:"rss_base_bytes,omitempty"`
	RSSAfter           int64        `json:"rss_after_bytes,omitempty"`
	RSSPeak            int64        `json:"rss_peak_bytes,omitempty"`
	Connections        int          `json:"connections,omitempty"`
	BytesPerConnection float64      `json:"bytes_per_connection,omitempty"`
	UploadBytes        int64        `json:"upload_bytes,omitempty"`
	UploadSeconds      float64      `json:"upload_seconds,omitempty"`
	Soak               []Checkpoint `json:"soak,omitempty"`
	SoakSeconds        float64      `json:"soak_seconds,omitempty"`
	SoakErrors         int64        `json:"soak_errors,omitempty"`
	Fuzz               *FuzzStats   `json:"fuzz,omitempty"`
	// Alive: the server was running (and, where the probe asks, answering)
	// at the end of the probe.
	Alive bool `json:"alive_after"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		os.Exit(1)
	}
}

func run() error {
	quick := flag.Bool("quick", false, "smoke version, under a minute: small counts, 2 s windows")
	host := flag.String("host", "127.0.0.1", "loopback address the servers listen on")
	probeList := flag.String("probes", "", "comma-separated probes (default all): "+strings.Join(allProbes, ","))
	targetList := flag.String("targets", "", "comma-separated target names to keep (default all)")
	results := flag.String("results", "", "results directory (default bench/results)")
	seed := flag.Uint64("seed", 1, "the mutator's random seed")
	flag.Parse()
	if !strings.HasPrefix(*host, "127.") && *host != "::1" {
		return fmt.Errorf("-host %s: the campaign targets loopback only", *host)
	}
	cfg := Config{Host: *host, Window: 10 * time.Second, Interval: 20 * time.Millisecond, ClientTimeout: 2 * time.Second,
		SlowlorisConns: 3000, SlowClients: 2, IdleConns: 5000,
		UploadBytes: 2 << 30, UploadLimit: 3 * time.Minute,
		SoakWarmup: 20000, SoakRequests: 500000, SoakConns: 8, SoakLimit: 120 * time.Second,
		FuzzTime: 60 * time.Second, FuzzWorkers: 8, FuzzQuiet: 300 * time.Millisecond, FuzzSeed: *seed,
		Probes: allProbes}
	if *quick {
		cfg.Quick, cfg.Window, cfg.ClientTimeout, cfg.SlowlorisConns, cfg.IdleConns = true, time.Second, 500*time.Millisecond, 200, 500
		cfg.UploadBytes, cfg.UploadLimit = 32<<20, 30*time.Second
		cfg.SoakWarmup, cfg.SoakRequests, cfg.SoakLimit = 500, 2000, 10*time.Second
		cfg.FuzzTime = 2 * time.Second
	}
	if *probeList != "" {
		cfg.Probes = nil
		for _, p := range strings.Split(*probeList, ",") {
			if !contains(allProbes, p) {
				return fmt.Errorf("-probes: no probe %q (have %s)", p, strings.Join(allProbes, ","))
			}
			cfg.Probes = append(cfg.Probes, p)
		}
	}
	var keep []string
	if *targetList != "" {
		keep = strings.Split(*targetList, ",")
	}

	root, err := repoRoot()
	if err != nil {
		return err
	}
	if *results == "" {
		*results = filepath.Join(root, "bench", "results")
	}
	logDir, err := os.MkdirTemp("", "m0reliability-")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "reliability: server logs in %s\n", logDir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	res := newResult(root, cfg)
	all := targets()
	// launchFor starts a target for a probe, or returns the row saying
	// why not.
	launchFor := func(probe, name string) (*Process, *Row) {
		t := all[name]
		if keep != nil && !contains(keep, name) {
			return nil, nil
		}
		if path := t.missing(root); path != "" {
			return nil, &Row{Probe: probe, Target: name, Skipped: path + " is missing"}
		}
		p, err := launch(t, root, cfg.Host, logDir)
		if err != nil {
			return nil, &Row{Probe: probe, Target: name, Failed: err.Error()}
		}
		return p, nil
	}
	add := func(rows ...Row) {
		for _, r := range rows {
			fmt.Fprintf(os.Stderr, "reliability: %s %s done at %.0f s\n", r.Probe, r.Target, time.Since(res.started).Seconds())
			res.Rows = append(res.Rows, r)
		}
	}
	step := func(probe string, names []string, body func(p *Process) Row) {
		if !cfg.wants(probe) {
			return
		}
		for _, name := range names {
			if ctx.Err() != nil {
				return
			}
			p, row := launchFor(probe, name)
			if row != nil {
				add(*row)
			}
			if p == nil {
				continue
			}
			add(body(p))
			res.stopped(probe, p)
		}
	}

	// Slowloris, slow readers and slow bodies share one server per target
	// and one quiet baseline.
	if cfg.wants("slowloris") || cfg.wants("slow-readers") || cfg.wants("slow-bodies") || cfg.wants("slow-bodies-1M") {
		for _, name := range []string{"m0serve-wsgi", "uvicorn", "gunicorn"} {
			if ctx.Err() != nil {
				break
			}
			p, row := launchFor("latency", name)
			if row != nil {
				add(*row)
			}
			if p != nil {
				add(latencyProbes(ctx, cfg, p)...)
				res.stopped("slowloris, slow readers, slow bodies", p)
			}
		}
	}
	step("idle", []string{"m0serve-wsgi-uring", "m0serve-wsgi-epoll", "uvicorn"}, func(p *Process) Row {
		return idleProbe(ctx, cfg, p)
	})
	if cfg.wants("idle") && (keep == nil || contains(keep, "gunicorn")) {
		add(Row{Probe: "idle", Target: "gunicorn", Skipped: "its default sync worker takes one connection at a time; the rest wait in the kernel's backlog"})
	}
	step("upload", []string{"m0serve-wsgi-4G", "uvicorn", "gunicorn"}, func(p *Process) Row {
		return uploadProbe(ctx, cfg, p)
	})
	step("soak", []string{"m0serve-native", "m0serve-wsgi", "m0serve-asgi", "uvicorn", "gunicorn"}, func(p *Process) Row {
		return soakProbe(ctx, cfg, p)
	})
	if cfg.wants("fuzz") && ctx.Err() == nil {
		add(fuzzAll(ctx, cfg, root, launchFor)...)
	}

	res.finish()
	path, err := res.write(*results)
	if err != nil {
		return err
	}
	printTable(os.Stdout, res)
	fmt.Fprintf(os.Stderr, "reliability: wrote %s\n", path)
	return ctx.Err()
}

// fuzzAll runs the mutated requests against every target at once: the
// probe counts, it does not time, so the targets may share the CPUs.
func fuzzAll(ctx context.Context, cfg Config, root string, launchFor func(probe, name string) (*Process, *Row)) []Row {
	var rows []Row
	var procs []*Process
	for _, name := range []string{"m0serve-wsgi", "m0serve-asgi", "uvicorn", "gunicorn"} {
		p, row := launchFor("fuzz", name)
		if row != nil {
			rows = append(rows, *row)
		}
		if p != nil {
			procs = append(procs, p)
		}
	}
	out := make([]Row, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		mut, err := newMutator(root, cfg.FuzzSeed+uint64(i))
		if err != nil {
			out[i] = Row{Probe: "fuzz", Target: p.Target.Name, Failed: err.Error()}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := fuzzTarget(ctx, p, mut, cfg.FuzzTime, cfg.FuzzWorkers, cfg.FuzzQuiet)
			out[i] = Row{Probe: "fuzz", Target: p.Target.Name, Fuzz: &st, Alive: st.Alive,
				Note: fmt.Sprintf("%d seeds", mut.Seeds())}
		}()
	}
	wg.Wait()
	for _, p := range procs {
		p.Stop()
	}
	return append(rows, out...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

// repoRoot is the checkout's top directory (the binary and the app are
// found from there).
func repoRoot() (string, error) {
	return runinfo.RepoRoot(filepath.Join("bench", "apps", "reliability.py"))
}
