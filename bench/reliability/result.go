package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Result is one campaign as written to bench/results/reliability-*.json.
type Result struct {
	Mode     string            `json:"mode"`
	Commit   string            `json:"commit"`
	Dirty    bool              `json:"dirty"`
	Date     string            `json:"date"`
	Kernel   string            `json:"kernel"`
	CPUs     int               `json:"cpus"`
	Go       string            `json:"go_version"`
	Versions map[string]string `json:"versions"`
	Config   Config            `json:"config"`
	Targets  []Target          `json:"targets"`
	Rows     []Row             `json:"rows"`
	// Crashes are the crash lines (Process.CrashLines) each server
	// logged during its probes.
	Crashes []Crash `json:"crashes,omitempty"`
	// LoadBefore and LoadAfter are /proc/loadavg around the run; Seconds
	// its length.
	LoadBefore string  `json:"loadavg_before"`
	LoadAfter  string  `json:"loadavg_after"`
	Seconds    float64 `json:"seconds"`
	started    time.Time
}

func newResult(root string, cfg Config) *Result {
	r := &Result{Mode: "reliability", Date: time.Now().UTC().Format(time.RFC3339), CPUs: runtime.NumCPU(),
		Go: runtime.Version(), Config: cfg, LoadBefore: loadavg(), started: time.Now(),
		Versions: map[string]string{}}
	if cfg.Quick {
		r.Mode += "-quick"
	} else {
		r.Mode += "-full"
	}
	git := func(args ...string) string {
		out, _ := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		return strings.TrimSpace(string(out))
	}
	r.Commit = git("rev-parse", "--short", "HEAD")
	r.Dirty = git("status", "--porcelain", "--untracked-files=no") != ""
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		r.Kernel = strings.TrimSpace(string(data))
	}
	version := func(name string, argv ...string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = root
		out, _ := cmd.CombinedOutput()
		r.Versions[name], _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	version("m0serve", "bin/m0serve", "--version")
	version("uvicorn", "/usr/bin/python3", "-m", "uvicorn", "--version")
	version("gunicorn", "/usr/bin/python3", "-m", "gunicorn", "--version")
	for _, t := range targets() {
		r.Targets = append(r.Targets, t)
	}
	sort.Slice(r.Targets, func(i, j int) bool { return r.Targets[i].Name < r.Targets[j].Name })
	return r
}

// Crash is what one server logged of crashes during its probes.
type Crash struct {
	Probes string   `json:"probes"`
	Target string   `json:"target"`
	Lines  []string `json:"lines"`
}

// stopped records p's crash lines, if any, then stops it.
func (r *Result) stopped(probes string, p *Process) {
	if lines := p.CrashLines(); len(lines) > 0 {
		r.Crashes = append(r.Crashes, Crash{probes, p.Target.Name, lines})
	}
	p.Stop()
}

func (r *Result) finish() {
	r.LoadAfter = loadavg()
	r.Seconds = time.Since(r.started).Seconds()
}

// write puts the result in dir as reliability-<mode>-<stamp>.json,
// through a .tmp file, and returns the path.
func (r *Result) write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	stamp := r.started.UTC().Format("20060102T150405Z")
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.json", r.Mode, stamp))
	if err := os.WriteFile(path+".tmp", append(data, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(path+".tmp", path)
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// printTable writes the result as Markdown tables, one per kind of probe.
func printTable(w io.Writer, r *Result) {
	fmt.Fprintf(w, "## bench-reliability %s, %s (commit %s%s), %d CPUs, load %s -> %s, %.0f s\n\n",
		r.Mode, r.Date, r.Commit, map[bool]string{true: "-dirty"}[r.Dirty], r.CPUs, r.LoadBefore, r.LoadAfter, r.Seconds)
	rows := func(probes ...string) []Row {
		var out []Row
		for _, row := range r.Rows {
			if contains(probes, row.Probe) {
				out = append(out, row)
			}
		}
		return out
	}
	status := func(row Row) (string, bool) {
		switch {
		case row.Skipped != "":
			return "skipped: " + row.Skipped, false
		case row.Failed != "":
			return "failed: " + row.Failed, false
		}
		return "", true
	}

	if list := rows("latency", "slowloris", "slow-readers", "slow-bodies", "slow-bodies-1M"); len(list) > 0 {
		fmt.Fprintf(w, "### A normal client during attacks (GET / every %v, %v timeout, %v windows)\n\n", r.Config.Interval, r.Config.ClientTimeout, r.Config.Window)
		fmt.Fprintln(w, "| probe | server | baseline p50 / p99 ms (errors) | attacked p50 / p99 ms (errors) | attackers | alive |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		for _, row := range list {
			if s, ok := status(row); !ok {
				fmt.Fprintf(w, "| %s | %s | %s | | | |\n", row.Probe, row.Target, s)
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", row.Probe, row.Target, latencyCell(*row.Baseline),
				latencyCell(*row.Attack), describeAttack(row), yes(row.Alive))
		}
		fmt.Fprintln(w)
	}
	if list := rows("idle"); len(list) > 0 {
		fmt.Fprintln(w, "### Idle connections' memory")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| server | connections open | RSS before → with them (MiB) | per connection |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, row := range list {
			if s, ok := status(row); !ok {
				fmt.Fprintf(w, "| %s | %s | | |\n", row.Target, s)
				continue
			}
			fmt.Fprintf(w, "| %s | %d | %s → %s | %.1f KiB |\n", row.Target, row.Connections, mib(row.RSSBase), mib(row.RSSAfter), row.BytesPerConnection/1024)
		}
		fmt.Fprintln(w)
	}
	if list := rows("upload"); len(list) > 0 {
		fmt.Fprintln(w, "### Uploads (one body streamed to an app that reads and discards it)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| server | body | RSS before → peak (MiB) | time | rate |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
		for _, row := range list {
			if s, ok := status(row); !ok {
				fmt.Fprintf(w, "| %s | %s MiB | %s | | |\n", row.Target, mib(row.UploadBytes), s)
				continue
			}
			fmt.Fprintf(w, "| %s | %s MiB | %s → %s | %.1f s | %.0f MiB/s |\n", row.Target, mib(row.UploadBytes), mib(row.RSSBase),
				mib(row.RSSPeak), row.UploadSeconds, float64(row.UploadBytes)/(1<<20)/row.UploadSeconds)
		}
		fmt.Fprintln(w)
	}
	if list := rows("soak"); len(list) > 0 {
		fmt.Fprintln(w, "### Soak (GET / over keep-alive connections; RSS after the warm-up, then at each fifth)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| server | requests | RSS MiB: warm → … → end | growth | errors | req/s |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		for _, row := range list {
			if s, ok := status(row); !ok {
				fmt.Fprintf(w, "| %s | %s | | | | |\n", row.Target, s)
				continue
			}
			var steps []string
			for _, c := range row.Soak {
				steps = append(steps, mib(c.RSS))
			}
			first, last := row.Soak[0], row.Soak[len(row.Soak)-1]
			fmt.Fprintf(w, "| %s | %d | %s | %+.1f MiB | %d | %.0f |\n", row.Target, last.Requests, strings.Join(steps, " → "),
				float64(last.RSS-first.RSS)/(1<<20), row.SoakErrors, float64(last.Requests)/row.SoakSeconds)
		}
		fmt.Fprintln(w)
	}
	if list := rows("fuzz"); len(list) > 0 {
		fmt.Fprintf(w, "### Mutated requests (%v, %d connections at a time, all servers at once)\n\n", r.Config.FuzzTime, r.Config.FuzzWorkers)
		fmt.Fprintln(w, "| server | connections | responses | 2xx / 4xx / 5xx | unanswered | invalid | crashed | alive |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		for _, row := range list {
			if s, ok := status(row); !ok {
				fmt.Fprintf(w, "| %s | %s | | | | | | |\n", row.Target, s)
				continue
			}
			f := row.Fuzz
			classes := map[byte]int{}
			var serverErrors []string
			for code, n := range f.Statuses {
				classes[code[0]] += n
				if code[0] == '5' {
					serverErrors = append(serverErrors, fmt.Sprintf("%s×%d", code, n))
				}
			}
			sort.Strings(serverErrors)
			fivexx := fmt.Sprint(classes['5'])
			if len(serverErrors) > 0 {
				fivexx += " (" + strings.Join(serverErrors, ", ") + ")"
			}
			fmt.Fprintf(w, "| %s | %d | %d | %d / %d / %s | %d | %d | %s | %s |\n", row.Target, f.Connections, f.Responses,
				classes['2'], classes['4'], fivexx, f.Unanswered, f.Invalid, crashCell(f), yes(f.Alive))
		}
		fmt.Fprintln(w)
	}
	for _, c := range r.Crashes {
		for _, line := range c.Lines {
			fmt.Fprintf(w, "- %s log (%s): %s\n", c.Target, c.Probes, line)
		}
	}
	for _, row := range r.Rows {
		if row.Note != "" && row.Probe != "fuzz" {
			fmt.Fprintf(w, "- %s %s: %s\n", row.Probe, row.Target, row.Note)
		}
		if row.Fuzz != nil {
			for _, e := range row.Fuzz.Examples {
				fmt.Fprintf(w, "- fuzz %s invalid: %s\n", row.Target, e)
			}
			for _, line := range row.Fuzz.FatalLogLines {
				fmt.Fprintf(w, "- fuzz %s log: %s\n", row.Target, line)
			}
		}
	}
}

func crashCell(f *FuzzStats) string {
	if len(f.FatalLogLines) > 0 {
		return fmt.Sprintf("%s, %d fatal log lines", yes(f.Crashed), len(f.FatalLogLines))
	}
	return yes(f.Crashed)
}

func latencyCell(l Latency) string {
	return fmt.Sprintf("%.1f / %.1f (%d/%d), stall %.1f s", l.P50ms, l.P99ms, l.Errors, l.Requests, l.StallMs/1000)
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
