package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"syscall"
	"time"
)

// Latency is what a normal client saw: one GET / at a time, paced, over a
// keep-alive connection (a new one after an error or a close, its connect
// counted in that request's time). A request not answered within the
// client's timeout is an error, not a sample.
type Latency struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
	// StallMs is the longest time without an answer: between two
	// answers, or from the window's start or to its end.
	StallMs float64 `json:"stall_ms"`
	// FirstError is the first error's text, to tell a timeout from a reset.
	FirstError string `json:"first_error,omitempty"`
}

func (l Latency) String() string {
	return fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, %d/%d errors", l.P50ms, l.P99ms, l.Errors, l.Requests)
}

const normalRequest = "GET / HTTP/1.1\r\nHost: bench\r\n\r\n"

// normalClient sends GET / to addr every interval for d and measures each
// answer; timeout bounds one request.
func normalClient(ctx context.Context, addr string, d, interval, timeout time.Duration) Latency {
	var (
		samples []time.Duration
		out     Latency
		conn    net.Conn
		reader  *bufio.Reader
	)
	closeConn := func() {
		if conn != nil {
			conn.Close()
			conn = nil
		}
	}
	defer closeConn()
	fail := func(err error) {
		out.Errors++
		if out.FirstError == "" {
			out.FirstError = err.Error()
		}
		closeConn()
	}
	begin := time.Now()
	end, lastAnswer := begin.Add(d), begin
	var stall time.Duration
	for next := time.Now(); time.Now().Before(end) && ctx.Err() == nil; {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		next = next.Add(interval)
		out.Requests++
		start := time.Now()
		deadline := start.Add(timeout)
		if conn == nil {
			c, err := net.DialTimeout("tcp", addr, timeout)
			if err != nil {
				fail(err)
				continue
			}
			conn, reader = c, bufio.NewReader(c)
		}
		conn.SetDeadline(deadline)
		if _, err := io.WriteString(conn, normalRequest); err != nil {
			fail(err)
			continue
		}
		resp, err := http.ReadResponse(reader, nil)
		if err != nil {
			fail(err)
			continue
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			fail(err)
			continue
		}
		if resp.StatusCode != 200 {
			fail(fmt.Errorf("status %d", resp.StatusCode))
			continue
		}
		samples = append(samples, time.Since(start))
		stall, lastAnswer = max(stall, time.Since(lastAnswer)), time.Now()
		if resp.Close {
			closeConn()
		}
		// Behind schedule after a slow answer: go on from now rather
		// than firing the missed requests back to back.
		if time.Until(next) < 0 {
			next = time.Now()
		}
	}
	stall = max(stall, time.Since(lastAnswer))
	out.StallMs = float64(stall) / float64(time.Millisecond)
	out.P50ms, out.P99ms, out.MaxMs = percentile(samples, 0.50), percentile(samples, 0.99), percentile(samples, 1)
	return out
}

// percentile is the q-quantile of samples in milliseconds (nearest rank).
func percentile(samples []time.Duration, q float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	sorted := append([]time.Duration(nil), samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	i := int(q*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// dialSmallReceive connects with a small receive buffer, so a response
// the client does not read fills the socket after a few hundred KiB.
func dialSmallReceive(addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var setErr error
		err := rc.Control(func(fd uintptr) {
			setErr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return setErr
	}}
	return d.Dial("tcp", addr)
}

// openConnections dials n connections to addr, at most parallel at once,
// writing first to each; it returns those that opened and the first
// error. Opening stops after 30 s: past a server's accept queue a dial
// waits for its SYN to be retried, and a server that accepts one
// connection at a time would take the probe's whole budget.
func openConnections(ctx context.Context, addr string, n, parallel int, first []byte) ([]net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	dialer := net.Dialer{Timeout: 3 * time.Second}
	conns := make([]net.Conn, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, parallel)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			c, err := dialer.DialContext(ctx, "tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			if len(first) > 0 {
				c.SetWriteDeadline(time.Now().Add(3 * time.Second))
				if _, err := c.Write(first); err != nil {
					c.Close()
					errs <- err
					return
				}
			}
			conns[i] = c
		}(i)
	}
	for i := 0; i < parallel; i++ {
		sem <- struct{}{}
	}
	var open []net.Conn
	for _, c := range conns {
		if c != nil {
			open = append(open, c)
		}
	}
	close(errs)
	if len(open) == n {
		return open, nil
	}
	if err := <-errs; err != nil {
		return open, fmt.Errorf("%d of %d connections did not open (the first error: %w)", n-len(open), n, err)
	}
	return open, fmt.Errorf("%d of %d connections opened in 30 s", len(open), n)
}

// stillOpen counts the connections the server has not closed: reading
// what it sent (a 408, say, or a stalled response) ends in a timeout
// while it is open and in EOF or a reset once it has closed.
func stillOpen(conns []net.Conn) int {
	n := 0
	buf := make([]byte, 64<<10)
	for _, c := range conns {
		open := true // still sending after 16 reads: a stalled response
		for range 16 {
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
			_, err := c.Read(buf)
			if err == nil {
				continue
			}
			ne, ok := err.(net.Error)
			open = ok && ne.Timeout()
			break
		}
		if open {
			n++
		}
	}
	return n
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}
