package main

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// WrkResult is what one wrk run reports.
type WrkResult struct {
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50us    float64 `json:"p50_us"`
	P99us    float64 `json:"p99_us"`
	// SocketErrors is wrk's "connect N, read N, write N, timeout N", or
	// empty when it reported none.
	SocketErrors string `json:"socket_errors,omitempty"`
	Non2xx       int64  `json:"non_2xx,omitempty"`
	// LatencyNote is set when wrk printed a percentile it cannot have
	// measured: wrk 4.1 prints "99% 0.00us" on some pipelined runs (its
	// percentile walk runs off the end of its histogram). Such a
	// percentile is kept as 0 and left out of the medians.
	LatencyNote string `json:"latency_note,omitempty"`
}

// parseWrk reads wrk 4's text report (run with --latency).
func parseWrk(out string) (WrkResult, error) {
	var r WrkResult
	var haveRequests, haveRPS, haveP50, haveP99 bool
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		fields := strings.Fields(line)
		switch {
		case len(fields) == 2 && fields[0] == "50%":
			v, err := parseLatency(fields[1])
			if err != nil {
				return r, err
			}
			r.P50us, haveP50 = v, true
		case len(fields) == 2 && fields[0] == "99%":
			v, err := parseLatency(fields[1])
			if err != nil {
				return r, err
			}
			r.P99us, haveP99 = v, true
		case len(fields) >= 5 && fields[1] == "requests" && fields[2] == "in":
			// "123456 requests in 3.00s, 12.34MB read"
			n, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return r, fmt.Errorf("wrk request count %q: %w", fields[0], err)
			}
			seconds, err := parseSeconds(strings.TrimSuffix(fields[3], ","))
			if err != nil {
				return r, err
			}
			r.Requests, r.Seconds, haveRequests = n, seconds, true
		case strings.HasPrefix(line, "Requests/sec:") && len(fields) == 2:
			v, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				return r, fmt.Errorf("wrk requests/sec %q: %w", fields[1], err)
			}
			r.RPS, haveRPS = v, true
		case strings.HasPrefix(line, "Socket errors:"):
			r.SocketErrors = strings.TrimSpace(strings.TrimPrefix(line, "Socket errors:"))
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			last := fields[len(fields)-1]
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil {
				return r, fmt.Errorf("wrk non-2xx count %q: %w", last, err)
			}
			r.Non2xx = n
		}
	}
	if !haveRequests || !haveRPS || !haveP50 || !haveP99 {
		return r, fmt.Errorf("wrk output lacks requests, Requests/sec or latency percentiles: %s", lastLines(out, 4))
	}
	if r.Requests > 0 && (r.P50us == 0 || r.P99us == 0) {
		r.LatencyNote = "wrk reported a 0 µs percentile; not a measurement"
	}
	return r, nil
}

// parseLatency turns wrk's "123.45us", "1.23ms" or "2.00s" into µs.
func parseLatency(text string) (float64, error) {
	units := []struct {
		suffix string
		scale  float64
	}{{"us", 1}, {"ms", 1e3}, {"m", 60e6}, {"s", 1e6}, {"h", 3600e6}}
	for _, u := range units {
		if strings.HasSuffix(text, u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(text, u.suffix), 64)
			if err != nil {
				return 0, fmt.Errorf("wrk latency %q: %w", text, err)
			}
			return v * u.scale, nil
		}
	}
	return 0, fmt.Errorf("wrk latency %q: unknown unit", text)
}

// parseSeconds turns wrk's run length ("3.00s", "1.00m") into seconds.
func parseSeconds(text string) (float64, error) {
	us, err := parseLatency(text)
	if err != nil {
		return 0, fmt.Errorf("wrk run length: %w", err)
	}
	return us / 1e6, nil
}
