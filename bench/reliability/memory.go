package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// idleProbe opens n connections that send nothing and reports the
// server's resident memory per connection: the growth from before them
// to when it has stopped growing, over the connections still open.
func idleProbe(ctx context.Context, cfg Config, p *Process) Row {
	row := Row{Probe: "idle", Target: p.Target.Name}
	settle(p)
	row.RSSBase = p.RSS()
	conns, err := openConnections(ctx, p.Addr, cfg.IdleConns, 50, nil)
	defer closeAll(conns)
	if err != nil {
		row.Note = "opening: " + err.Error()
	}
	row.RSSAfter = settle(p)
	row.Connections = stillOpen(conns)
	if row.Connections > 0 {
		row.BytesPerConnection = float64(row.RSSAfter-row.RSSBase) / float64(row.Connections)
	}
	status, err := getOnce(p.Addr, "/", 10*time.Second)
	row.Alive = err == nil && status == 200
	return row
}

// settle waits (at most 10 s) until the resident set has stopped
// changing over half a second, and returns it.
func settle(p *Process) int64 {
	last := p.RSS()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		now := p.RSS()
		if now-last < 64<<10 && last-now < 64<<10 {
			return now
		}
		last = now
	}
	return last
}

// uploadProbe POSTs size bytes (Content-Length) to /upload, which reads
// and discards them, sampling the server's resident memory every 50 ms.
func uploadProbe(ctx context.Context, cfg Config, p *Process) Row {
	row := Row{Probe: "upload", Target: p.Target.Name, UploadBytes: cfg.UploadBytes}
	row.RSSBase = settle(p)
	stop := make(chan struct{})
	var peak atomic.Int64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			if rss := p.RSS(); rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	answer, err := upload(ctx, p.Addr, cfg.UploadBytes, cfg.UploadLimit)
	row.UploadSeconds = time.Since(start).Seconds()
	close(stop)
	sampler.Wait()
	row.RSSPeak = peak.Load()
	row.RSSAfter = p.RSS()
	if err != nil {
		row.Failed = err.Error()
	} else if want := fmt.Sprint(cfg.UploadBytes); answer != want {
		row.Failed = fmt.Sprintf("the app read %q bytes, want %s", answer, want)
	}
	row.Alive = p.Alive()
	return row
}

// upload sends one request with a size-byte body and returns the
// response body, all within limit.
func upload(ctx context.Context, addr string, size int64, limit time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	deadline := time.Now().Add(limit)
	c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	head := fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: bench\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", size)
	if _, err := io.WriteString(c, head); err != nil {
		return "", err
	}
	block := []byte(strings.Repeat("u", 256<<10))
	for sent := int64(0); sent < size; {
		n := min(int64(len(block)), size-sent)
		if _, err := c.Write(block[:n]); err != nil {
			return "", fmt.Errorf("after %d MiB of the body: %w", sent>>20, err)
		}
		sent += n
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", fmt.Errorf("reading the response: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("status %d: %.100s", resp.StatusCode, body)
	}
	return string(body), err
}

// Checkpoint is the resident memory after so many requests past the
// warm-up.
type Checkpoint struct {
	Requests int64 `json:"requests"`
	RSS      int64 `json:"rss_bytes"`
}

// soakProbe drives GET / from cfg.SoakConns keep-alive connections:
// cfg.SoakWarmup requests, then cfg.SoakRequests more, recording the
// resident memory after the warm-up and at five checkpoints; the whole
// is bounded by cfg.SoakLimit.
func soakProbe(ctx context.Context, cfg Config, p *Process) Row {
	row := Row{Probe: "soak", Target: p.Target.Name}
	ctx, cancel := context.WithTimeout(ctx, cfg.SoakLimit)
	defer cancel()
	var done, failed atomic.Int64
	drive := func(until int64) {
		var wg sync.WaitGroup
		for i := 0; i < cfg.SoakConns; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hammer(ctx, p.Addr, &done, &failed, until)
			}()
		}
		wg.Wait()
	}
	start := time.Now()
	drive(cfg.SoakWarmup)
	warm := done.Load()
	row.Soak = append(row.Soak, Checkpoint{0, p.RSS()})
	for k := int64(1); k <= 5 && ctx.Err() == nil; k++ {
		drive(warm + k*cfg.SoakRequests/5)
		row.Soak = append(row.Soak, Checkpoint{min(done.Load(), warm+k*cfg.SoakRequests/5) - warm, p.RSS()})
	}
	row.SoakSeconds = time.Since(start).Seconds()
	row.SoakErrors = failed.Load()
	if last := row.Soak[len(row.Soak)-1]; last.Requests < cfg.SoakRequests {
		row.Note = fmt.Sprintf("stopped at %d requests by the %v limit", last.Requests, cfg.SoakLimit)
	}
	row.Alive = p.Alive()
	return row
}

// hammer sends GET / on one keep-alive connection (a new one when the
// server closes it or fails) until done reaches until or ctx ends.
func hammer(ctx context.Context, addr string, done, failed *atomic.Int64, until int64) {
	var c net.Conn
	var r *bufio.Reader
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for ctx.Err() == nil && done.Load() < until {
		if c == nil {
			var err error
			if c, err = net.DialTimeout("tcp", addr, 5*time.Second); err != nil {
				failed.Add(1)
				c = nil
				time.Sleep(10 * time.Millisecond)
				continue
			}
			r = bufio.NewReader(c)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		ok := false
		if _, err := io.WriteString(c, normalRequest); err == nil {
			if resp, err := http.ReadResponse(r, nil); err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ok = err == nil && resp.StatusCode == 200
				if ok && resp.Close {
					c.Close()
					c = nil
				}
			}
		}
		if !ok {
			failed.Add(1)
			if c != nil {
				c.Close()
				c = nil
			}
			continue
		}
		done.Add(1)
	}
}
