package server

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pglisten"
	"github.com/m0serve/m0serve/pybridge"
	"github.com/m0serve/m0serve/realtime"
)

// HeartbeatEnv is the variable (the Mojo m0serve's) that sets how often a
// held stream gets a heartbeat, in milliseconds (0: never).
const HeartbeatEnv = "M0_SSE_HEARTBEAT_MS"

// DefaultSSEHeartbeat is HeartbeatEnv's default.
const DefaultSSEHeartbeat = 15 * time.Second

// realtimeBus is this process's part of --realtime: its bus read end
// (read by a goroutine that posts each datagram to the loop) and the
// shared event-id counter.
type realtimeBus struct {
	worker    *realtime.Worker
	own       *realtime.Bus // a single process's own bus; nil in a worker
	heartbeat time.Duration
	replay    int
}

// validateRealtime checks --realtime's flags and reads the heartbeat's
// variable.
func (c *Config) validateRealtime() error {
	if c.ReplayFrames < 0 || c.ReplayFrames > realtime.MaxReplayFrames {
		return &ConfigError{Flag: "replay-frames", Reason: fmt.Sprintf("%d: want 0 to %d", c.ReplayFrames, realtime.MaxReplayFrames)}
	}
	if c.PGListen != "" {
		if !c.Realtime {
			return &ConfigError{Flag: "pg-listen", Reason: "publishes to the streams --realtime holds: give --realtime too"}
		}
		if _, err := pglisten.Check(c.PGListen); err != nil {
			return &ConfigError{Flag: "pg-listen", Reason: err.Error()}
		}
	}
	if !c.Realtime {
		return nil
	}
	if c.App == "" {
		return &ConfigError{Flag: "realtime", Reason: "holds a Python app's streams: not with --native"}
	}
	if c.Threads == 0 {
		return &ConfigError{Flag: "realtime", Reason: "--threads 0 runs views on the I/O thread, where a response cannot become a hold: give --threads 1 or more"}
	}
	if text, ok := os.LookupEnv(HeartbeatEnv); ok {
		ms, err := strconv.Atoi(text)
		if err != nil || ms < 0 {
			return &ConfigError{Flag: HeartbeatEnv, Reason: fmt.Sprintf("%q: want milliseconds (0: no heartbeats)", text)}
		}
		c.SSEHeartbeat = time.Duration(ms) * time.Millisecond
	}
	return nil
}

// openRealtime finds this worker's part of the master's bus, or makes a
// single process's own; either way before Python starts, so that the
// app's m0pub finds its variables. nil without --realtime.
func openRealtime(cfg *Config) (*realtimeBus, error) {
	if !cfg.Realtime {
		return nil, nil
	}
	rt := &realtimeBus{heartbeat: cfg.SSEHeartbeat, replay: cfg.ReplayFrames}
	worker, ok, err := realtime.WorkerFromEnv()
	if err != nil {
		return nil, err
	}
	if !ok {
		if cfg.Worker != nil {
			return nil, fmt.Errorf("--realtime: this worker's master made no bus (%s is not set)", realtime.ReadFDEnv)
		}
		bus, err := realtime.NewBus(1)
		if err != nil {
			return nil, err
		}
		for _, kv := range bus.Env(bus.Reads[0], bus.Page, bus.Writes) {
			name, value, _ := strings.Cut(kv, "=")
			os.Setenv(name, value)
		}
		rt.own = bus
		if worker, _, err = realtime.WorkerFromEnv(); err != nil {
			bus.Close()
			return nil, err
		}
	}
	// The app's children find the bus by its variables and the
	// descriptors they are handed (m0pub.child_fds()); the read end is
	// the server's alone.
	os.Unsetenv(realtime.ReadFDEnv)
	rt.worker = worker
	return rt, nil
}

// loopConfig is the loop's Config.Realtime; nil without --realtime.
func (rt *realtimeBus) loopConfig() *loop.Realtime {
	if rt == nil {
		return nil
	}
	return &loop.Realtime{Counter: rt.worker.Counter, ReplayFrames: rt.replay, Heartbeat: rt.heartbeat}
}

// publisher hands the interpreter m0pub's numbering (the counter's page
// as this process maps it); without --realtime the module is still
// importable and publish is a no-op returning 0.
func (rt *realtimeBus) publisher() pybridge.Publisher {
	p := pybridge.Publisher{Source: realtime.PublisherSource}
	if rt != nil {
		p.Counter = rt.worker.Counter.Word()
	}
	return p
}

// listenPostgres runs --pg-listen in a single process (a master runs its
// workers' own) until stop is closed.
func (rt *realtimeBus) listenPostgres(cfg *Config, logf func(string, ...any)) (stop func()) {
	if rt == nil || cfg.PGListen == "" || cfg.Worker != nil {
		return func() {}
	}
	l, err := pglisten.New(cfg.PGListen)
	if err != nil { // Validate checked it
		return func() {}
	}
	l.Publish, l.Counter, l.Logf = rt.worker.Publish, rt.worker.Counter, logf
	ctx, cancel := context.WithCancel(context.Background())
	go l.Run(ctx)
	return cancel
}

// run reads the bus until the process ends, posting each datagram to the
// loop: a goroutine of its own, off every request's path. A datagram is
// copied once, by Broadcast.
func (rt *realtimeBus) run(l *loop.Loop, logf func(string, ...any)) {
	if rt == nil {
		return
	}
	go func() {
		buf := make([]byte, realtime.MaxDatagram)
		for {
			n, err := rt.worker.Receive(buf)
			if err != nil {
				logf("m0serve: error: --realtime: reading the bus: %v", err)
				return
			}
			l.Broadcast(buf[:n])
		}
	}()
}
