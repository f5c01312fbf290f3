package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// FuzzStats is one target's run of mutated requests.
type FuzzStats struct {
	Seconds     float64 `json:"seconds"`
	Connections int     `json:"connections"`
	Responses   int     `json:"responses"`
	// Invalid connections received bytes that are not HTTP/1.x responses
	// (Examples keeps the first few); Unanswered ones were closed by the
	// server or left waiting with nothing sent (a refusal to parse is
	// allowed to be a close); Cut ones ended inside a response when the
	// client stopped waiting.
	Invalid    int            `json:"invalid"`
	Unanswered int            `json:"unanswered"`
	Cut        int            `json:"cut"`
	Upgraded   int            `json:"upgraded"`
	Statuses   map[string]int `json:"statuses"` // by code
	// Crashed: the process exited during the run; Alive: it answered a
	// plain GET afterwards.
	Crashed bool `json:"crashed"`
	Alive   bool `json:"alive"`
	// FatalLogLines are the server's log lines that tell of a crash
	// inside a process that lived on (Process.CrashLines).
	FatalLogLines []string `json:"fatal_log_lines,omitempty"`
	Examples      []string `json:"invalid_examples,omitempty"`
}

// fuzzTarget sends mutated requests to p for d from workers connections
// at a time, one request (or pipelined batch) per connection, and checks
// every byte that comes back. A connection ends when the server closes
// it or has sent nothing for quiet.
func fuzzTarget(ctx context.Context, p *Process, mut *Mutator, d time.Duration, workers int, quiet time.Duration) FuzzStats {
	st := FuzzStats{Statuses: map[string]int{}}
	var mu sync.Mutex // guards st and mut
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && p.Alive() {
				mu.Lock()
				request := mut.Next()
				mu.Unlock()
				got, closed, err := exchange(p.Addr, request, quiet, 5*time.Second)
				if err != nil {
					// The server refused the connection or reset it before
					// the request was written: it is checked below by the
					// process being alive.
					mu.Lock()
					st.Connections++
					st.Unanswered++
					mu.Unlock()
					continue
				}
				v := validateResponses(got, closed)
				mu.Lock()
				st.Connections++
				st.Responses += v.Responses
				for _, s := range v.Statuses {
					st.Statuses[strconv.Itoa(s)]++
				}
				switch {
				case v.Invalid != "":
					st.Invalid++
					if len(st.Examples) < 5 {
						st.Examples = append(st.Examples, fmt.Sprintf("%s; request %.200q; response %.200q", v.Invalid, request, got))
					}
				case v.Upgraded:
					st.Upgraded++
				case v.Incomplete:
					st.Cut++
				case v.Responses == 0:
					st.Unanswered++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	st.Seconds = time.Since(start).Seconds()
	st.Crashed = !p.Alive()
	if !st.Crashed {
		status, err := getOnce(p.Addr, "/", 10*time.Second)
		st.Alive = err == nil && status == 200
	}
	st.FatalLogLines = p.CrashLines()
	return st
}

// exchange writes request on a new connection and reads until the server
// closes it (closed true), nothing has come for quiet, or limit passes.
func exchange(addr string, request []byte, quiet, limit time.Duration) (got []byte, closed bool, err error) {
	c, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	end := time.Now().Add(limit)
	c.SetWriteDeadline(end)
	if _, err := c.Write(request); err != nil && len(request) < 4096 {
		return nil, false, err
	}
	// A long request may be answered (431, 413) and closed before it is
	// all written; what came back is still read and checked.
	buf := make([]byte, 32<<10)
	for {
		wait := time.Now().Add(quiet)
		if wait.After(end) {
			wait = end
		}
		c.SetReadDeadline(wait)
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return got, false, nil
		}
		// A reset (a server closing with the request unread) may drop
		// bytes already sent, so what arrived is checked as cut by the
		// client, not as ended by the server: only an EOF vouches that
		// the server meant the bytes to end there.
		return got, errors.Is(err, io.EOF), nil
	}
}
