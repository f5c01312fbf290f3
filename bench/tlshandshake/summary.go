package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// summarise takes the median CPU per handshake of each arm's rounds with
// each certificate, in the order they were first run; failed rounds are
// left out (an arm whose rounds all failed has Rounds 0).
func summarise(rounds []Round) []Summary {
	type key struct{ arm, cert string }
	var order []key
	values := map[key][]float64{}
	for _, r := range rounds {
		k := key{r.Arm, r.Cert}
		if _, seen := values[k]; !seen {
			order = append(order, k)
			values[k] = nil
		}
		if r.Error == "" && r.CPUus > 0 {
			values[k] = append(values[k], r.CPUus)
		}
	}
	var out []Summary
	for _, k := range order {
		s := Summary{Arm: k.arm, Cert: k.cert, Rounds: len(values[k])}
		if s.Rounds > 0 {
			s.CPUus = median(values[k])
			s.PerCPUSecond = 1e6 / s.CPUus
		}
		out = append(out, s)
	}
	return out
}

func median(values []float64) float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	m := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[m]
	}
	return (sorted[m-1] + sorted[m]) / 2
}

// printSummary writes, per certificate, each arm's median and the first
// arm's CPU per handshake over each other arm's (below 1: cheaper; its
// inverse is the ratio of handshakes per CPU-second).
func printSummary(w io.Writer, summaries []Summary, arms []Arm, certs []cert) {
	find := func(arm, c string) (Summary, bool) {
		for _, s := range summaries {
			if s.Arm == arm && s.Cert == c && s.Rounds > 0 {
				return s, true
			}
		}
		return Summary{}, false
	}
	first := arms[0].Name
	fmt.Fprintf(w, "\nmedians: µs of server CPU per full handshake (and its request), handshakes per CPU-second, and %s's CPU over each arm's\n", first)
	for _, c := range certs {
		fmt.Fprintf(w, "[%s]\n", c.name)
		base, haveBase := find(first, c.name)
		for _, arm := range arms {
			s, ok := find(arm.Name, c.name)
			if !ok {
				fmt.Fprintf(w, "  %-18s no figure\n", arm.Name)
				continue
			}
			line := fmt.Sprintf("  %-18s %7.0f µs %6.0f/CPU-s", arm.Name, s.CPUus, s.PerCPUSecond)
			if haveBase && arm.Name != first {
				line += fmt.Sprintf("  %s %.2f×", first, base.CPUus/s.CPUus)
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
}
