package main

import (
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/m0serve/m0serve/bench/internal/runinfo"
)

// Result is one campaign as written to bench/results/reliability-*.json.
type Result struct {
	Mode string `json:"mode"`
	runinfo.Origin
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
	r := &Result{Mode: "reliability", Origin: runinfo.NewOrigin(root), CPUs: runtime.NumCPU(),
		Go: runtime.Version(), Config: cfg, LoadBefore: runinfo.LoadAverage(), started: time.Now(),
		Versions: map[string]string{}}
	if cfg.Quick {
		r.Mode += "-quick"
	} else {
		r.Mode += "-full"
	}
	version := func(name string, argv ...string) {
		r.Versions[name] = runinfo.CommandLine(root, argv[0], argv[1:]...)
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
	r.LoadAfter = runinfo.LoadAverage()
	r.Seconds = time.Since(r.started).Seconds()
}

// write puts the result in dir as reliability-<mode>-<stamp>.json and
// returns the path.
func (r *Result) write(dir string) (string, error) {
	return runinfo.WriteJSON(dir, r.Mode, r.started, r)
}

// printTable writes the result as Markdown tables, one per kind of probe.
func printTable(w io.Writer, r *Result) {
	fmt.Fprintf(w, "## bench-reliability %s, %s (commit %s%s), %d CPUs, load %s -> %s, %.0f s\n\n",
		r.Mode, r.Date, r.Commit, map[bool]string{true: "-dirty"}[r.Dirty], r.CPUs, r.LoadBefore, r.LoadAfter, r.Seconds)
	target := func(row Row) []string { return []string{row.Target} }
	tables := []struct {
		probes  []string
		title   string
		columns []string
		// lead is the cells a skipped or failed row keeps before saying
		// why; cells is a measured row's, after lead.
		lead, cells func(Row) []string
	}{
		{
			probes:  []string{"latency", "slowloris", "slow-readers", "slow-bodies", "slow-bodies-1M"},
			title:   fmt.Sprintf("A normal client during attacks (GET / every %v, %v timeout, %v windows)", r.Config.Interval, r.Config.ClientTimeout, r.Config.Window),
			columns: []string{"probe", "server", "baseline p50 / p99 ms (errors)", "attacked p50 / p99 ms (errors)", "attackers", "alive"},
			lead:    func(row Row) []string { return []string{row.Probe, row.Target} },
			cells: func(row Row) []string {
				return []string{latencyCell(*row.Baseline), latencyCell(*row.Attack), describeAttack(row), yes(row.Alive)}
			},
		},
		{
			probes:  []string{"idle"},
			title:   "Idle connections' memory",
			columns: []string{"server", "connections open", "RSS before → with them (MiB)", "per connection"},
			lead:    target,
			cells: func(row Row) []string {
				return []string{fmt.Sprint(row.Connections), mib(row.RSSBase) + " → " + mib(row.RSSAfter), fmt.Sprintf("%.1f KiB", row.BytesPerConnection/1024)}
			},
		},
		{
			probes:  []string{"upload"},
			title:   "Uploads (one body streamed to an app that reads and discards it)",
			columns: []string{"server", "body", "RSS before → peak (MiB)", "time", "rate"},
			lead:    func(row Row) []string { return []string{row.Target, mib(row.UploadBytes) + " MiB"} },
			cells: func(row Row) []string {
				return []string{mib(row.RSSBase) + " → " + mib(row.RSSPeak), fmt.Sprintf("%.1f s", row.UploadSeconds),
					fmt.Sprintf("%.0f MiB/s", float64(row.UploadBytes)/(1<<20)/row.UploadSeconds)}
			},
		},
		{
			probes:  []string{"soak"},
			title:   "Soak (GET / over keep-alive connections; RSS after the warm-up, then at each fifth)",
			columns: []string{"server", "requests", "RSS MiB: warm → … → end", "growth", "errors", "req/s"},
			lead:    target,
			cells:   soakCells,
		},
		{
			probes:  []string{"fuzz"},
			title:   fmt.Sprintf("Mutated requests (%v, %d connections at a time, all servers at once)", r.Config.FuzzTime, r.Config.FuzzWorkers),
			columns: []string{"server", "connections", "responses", "2xx / 4xx / 5xx", "unanswered", "invalid", "crashed", "alive"},
			lead:    target,
			cells:   fuzzCells,
		},
	}
	for _, t := range tables {
		var list []Row
		for _, row := range r.Rows {
			if contains(t.probes, row.Probe) {
				list = append(list, row)
			}
		}
		if len(list) == 0 {
			continue
		}
		fmt.Fprintf(w, "### %s\n\n", t.title)
		tableLine(w, t.columns)
		fmt.Fprintln(w, "|"+strings.Repeat("---|", len(t.columns)))
		for _, row := range list {
			cells := t.lead(row)
			switch {
			case row.Skipped != "":
				cells = append(cells, "skipped: "+row.Skipped)
			case row.Failed != "":
				cells = append(cells, "failed: "+row.Failed)
			default:
				tableLine(w, append(cells, t.cells(row)...))
				continue
			}
			tableLine(w, append(cells, make([]string, len(t.columns)-len(cells))...))
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

// tableLine writes one line of a Markdown table; an empty cell is
// written as "| |".
func tableLine(w io.Writer, cells []string) {
	line := "|"
	for _, c := range cells {
		if c != "" {
			line += " " + c
		}
		line += " |"
	}
	fmt.Fprintln(w, line)
}

// soakCells is a soak row's figures: the requests, RSS at each
// checkpoint, its growth, the errors and the rate.
func soakCells(row Row) []string {
	var steps []string
	for _, c := range row.Soak {
		steps = append(steps, mib(c.RSS))
	}
	first, last := row.Soak[0], row.Soak[len(row.Soak)-1]
	return []string{fmt.Sprint(last.Requests), strings.Join(steps, " → "), fmt.Sprintf("%+.1f MiB", float64(last.RSS-first.RSS)/(1<<20)),
		fmt.Sprint(row.SoakErrors), fmt.Sprintf("%.0f", float64(last.Requests)/row.SoakSeconds)}
}

// fuzzCells is a fuzz row's figures, the 5xx statuses named.
func fuzzCells(row Row) []string {
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
	return []string{fmt.Sprint(f.Connections), fmt.Sprint(f.Responses), fmt.Sprintf("%d / %d / %s", classes['2'], classes['4'], fivexx),
		fmt.Sprint(f.Unanswered), fmt.Sprint(f.Invalid), crashCell(f), yes(f.Alive)}
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
