package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Summary is one arm in one scenario: the median of its rounds.
type Summary struct {
	Scenario        string  `json:"scenario"`
	Arm             string  `json:"arm"`
	Rounds          int     `json:"rounds"`
	RPS             float64 `json:"rps"`
	P50us           float64 `json:"p50_us"`
	P99us           float64 `json:"p99_us"`
	CPUusPerRequest float64 `json:"cpu_us_per_request"`
	Cores           float64 `json:"cores"`
	ClientCores     float64 `json:"client_cores"` // the load generator's (Run's)
	// Switches per request, voluntary and involuntary (Run's).
	VoluntarySwitches   float64 `json:"voluntary_switches_per_request"`
	InvoluntarySwitches float64 `json:"involuntary_switches_per_request"`
}

// summarise takes the median of every figure over each arm's rounds in
// each scenario, in the order the runs were made.
func summarise(runs []Run) []Summary {
	type key struct{ scenario, arm string }
	var order []key
	grouped := map[key][]Run{}
	for _, run := range runs {
		k := key{run.Scenario, run.Arm}
		if _, seen := grouped[k]; !seen {
			order = append(order, k)
		}
		grouped[k] = append(grouped[k], run)
	}
	summaries := make([]Summary, 0, len(order))
	for _, k := range order {
		group := grouped[k]
		pick := func(figure func(Run) float64) float64 {
			values := make([]float64, 0, len(group))
			for _, run := range group {
				values = append(values, figure(run))
			}
			return median(values)
		}
		// A latency of 0 is wrk failing to report one (see LatencyNote):
		// the median is over the rounds that have it, 0 when none has.
		pickLatency := func(figure func(Run) float64) float64 {
			var values []float64
			for _, run := range group {
				if v := figure(run); v > 0 {
					values = append(values, v)
				}
			}
			return median(values)
		}
		summaries = append(summaries, Summary{
			Scenario:        k.scenario,
			Arm:             k.arm,
			Rounds:          len(group),
			RPS:             pick(func(r Run) float64 { return r.RPS }),
			P50us:           pickLatency(func(r Run) float64 { return r.P50us }),
			P99us:           pickLatency(func(r Run) float64 { return r.P99us }),
			CPUusPerRequest: pick(func(r Run) float64 { return r.CPUusPerRequest }),
			Cores:           pick(func(r Run) float64 { return r.Cores }),
			ClientCores:     pick(func(r Run) float64 { return r.ClientCores }),

			VoluntarySwitches:   pick(func(r Run) float64 { return r.VoluntarySwitchesPerRequest }),
			InvoluntarySwitches: pick(func(r Run) float64 { return r.InvoluntarySwitchesPerRequest }),
		})
	}
	return summaries
}

// median of an even count is the mean of the middle two.
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	middle := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[middle]
	}
	return (sorted[middle-1] + sorted[middle]) / 2
}

// ratio is a/b, or 0 when b is 0 (a peer with no figure).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// printTable writes, per scenario and per group of comparable arms
// (Arm.Group), a row per arm with its medians and its ratio to each peer
// of its group: rps× above 1 is faster than the peer, cpu× below 1 is
// cheaper per request. Skipped and failed arms are listed in their group.
func printTable(w io.Writer, chosen []Scenario, records []*ArmRecord, summaries []Summary) {
	find := func(scenario, arm string) (Summary, bool) {
		for _, s := range summaries {
			if s.Scenario == scenario && s.Arm == arm {
				return s, true
			}
		}
		return Summary{}, false
	}
	for _, scenario := range chosen {
		rate, cost := "rps", "µs/req"
		if scenario.WebSocket != "" {
			// An HTTP arm's row in an echo scenario is still per request.
			rate, cost = "msg/s", "µs/msg"
		}
		fmt.Fprintf(w, "\n%s (%s); medians; ratios are %s× / cpu× against each peer\n", scenario.Name, scenario.Describe(), rate)
		var applying []*ArmRecord
		for _, record := range records {
			if record.Applies(scenario) {
				applying = append(applying, record)
			}
		}
		groups := groupRecords(applying)
		width := 14
		for _, record := range applying {
			width = max(width, len(record.Name))
		}
		for i, group := range groups {
			if len(groups) > 1 {
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "[%s]\n", groupTitle(group.name))
			}
			header := fmt.Sprintf("%-*s %10s %9s %9s %8s %6s %6s %11s", width, "arm", rate, "p50 µs", "p99 µs", cost, "cores", "client", "csw/req")
			columns := make([]int, len(group.peers))
			for i, peer := range group.peers {
				columns[i] = max(13, len("vs "+peer))
				header += fmt.Sprintf("  %-*s", columns[i], "vs "+peer)
			}
			fmt.Fprintln(w, strings.TrimRight(header, " "))
			for _, record := range group.records {
				row, ok := find(scenario.Name, record.Name)
				if !ok {
					fmt.Fprintf(w, "%-*s %s\n", width, record.Name, armState(record))
					continue
				}
				line := fmt.Sprintf("%-*s %10.0f %9s %9s %8.2f %6.2f %6.2f %11s",
					width, record.Name, row.RPS, latencyCell(row.P50us), latencyCell(row.P99us), row.CPUusPerRequest, row.Cores, row.ClientCores,
					fmt.Sprintf("%.2f+%.2f", row.VoluntarySwitches, row.InvoluntarySwitches))
				for i, peer := range group.peers {
					base, ok := find(scenario.Name, peer)
					if !ok {
						line += fmt.Sprintf("  %-*s", columns[i], "-")
						continue
					}
					line += fmt.Sprintf("  %-*s", columns[i], fmt.Sprintf("%.2f/%.2f", ratio(row.RPS, base.RPS), ratio(row.CPUusPerRequest, base.CPUusPerRequest)))
				}
				fmt.Fprintln(w, strings.TrimRight(line, " "))
			}
		}
		if scenario.Reference != "" {
			fmt.Fprintf(w, "%s\n", scenario.Reference)
		}
	}
}

// armGroup is the arms of one Group, in arm order, and its peers.
type armGroup struct {
	name    string
	records []*ArmRecord
	peers   []string
}

// groupRecords splits the arms by Group, groups in order of first
// appearance.
func groupRecords(records []*ArmRecord) []armGroup {
	var groups []armGroup
	index := map[string]int{}
	for _, record := range records {
		i, ok := index[record.Group]
		if !ok {
			i = len(groups)
			index[record.Group] = i
			groups = append(groups, armGroup{name: record.Group})
		}
		groups[i].records = append(groups[i].records, record)
		if record.Peer {
			groups[i].peers = append(groups[i].peers, record.Name)
		}
	}
	return groups
}

// groupTitle names the unnamed group of the built-in arms.
func groupTitle(name string) string {
	if name == "" {
		return "native hello"
	}
	return name
}

// printResponses lists what each arm answered in the parity check, so a
// difference in response size between arms is seen next to the figures.
func printResponses(w io.Writer, records []*ArmRecord) {
	fmt.Fprintln(w, "\nresponses (parity check)")
	for _, record := range records {
		if record.Parity == nil || record.Parity.Status == 0 {
			continue
		}
		fmt.Fprintf(w, "%-14s %d, %3d bytes, headers %s\n", record.Name, record.Parity.Status,
			record.Parity.ResponseBytes, strings.Join(record.Parity.HeaderOrder, ", "))
	}
}

// latencyCell prints a latency in whole µs, "-" when wrk gave none.
func latencyCell(us float64) string {
	if us <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", us)
}

// armState says why an arm has no figures.
func armState(record *ArmRecord) string {
	switch {
	case record.SkipReason != "":
		return "skipped: " + record.SkipReason
	case record.Failed != "":
		return "failed: " + record.Failed
	default:
		return "no figures"
	}
}
