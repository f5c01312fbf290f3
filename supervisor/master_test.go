package supervisor

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m0serve/m0serve/internal/workerproto"
)

// The master's state machine driven in-process: fake workers (no
// processes) whose lines and exits the tests hand to master.handle, and
// sweep called with the times the tests choose.

// fakeProc stands in for a worker's process: it records the signals the
// master sends and the reap.
type fakeProc struct {
	signals []syscall.Signal
	reaped  bool
	status  syscall.WaitStatus
}

func (p *fakeProc) signal(sig syscall.Signal) {
	if p.reaped {
		panic(fmt.Sprintf("signal %v to a reaped process", sig))
	}
	p.signals = append(p.signals, sig)
}

func (p *fakeProc) reap() syscall.WaitStatus {
	if p.reaped {
		panic("reaped twice")
	}
	p.reaped = true
	return p.status
}

// fakeControl is the master's end of a fake worker's control socket.
type fakeControl struct {
	lines  []string
	closed bool
}

func (c *fakeControl) Write(p []byte) (int, error) {
	c.lines = append(c.lines, strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func (c *fakeControl) Close() error { c.closed = true; return nil }

type fakeMaster struct {
	*master
	t        *testing.T
	nextPid  int
	launched []*worker
	logs     []string
	// noLayout: the next workers write no heartbeat layout (a binary
	// from before the layout was versioned, or another layout).
	noLayout bool
}

func newFakeMaster(t *testing.T, workers int, tweak func(*Config)) *fakeMaster {
	cfg := Defaults
	cfg.Workers = workers
	cfg.Listener = "shared"
	cfg.Server = &testServer{}
	if tweak != nil {
		tweak(&cfg)
	}
	f := &fakeMaster{t: t, nextPid: 1000}
	f.master = newMaster(cfg, func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		f.logs = append(f.logs, line)
		t.Log(line)
	})
	f.launch = f.launchFake
	port := 0
	for i := 0; i < workers; i++ {
		if err := f.addSlot(&port); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(f.closeSockets)
	return f
}

func (f *fakeMaster) launchFake(s *slot) (*worker, error) {
	mem := make([]byte, workerproto.HeartbeatSize)
	if !f.noLayout {
		workerproto.WriteLayout(mem) // as the worker does, before its first line
	}
	f.nextPid++
	w := &worker{
		exitCode:  -1,
		slot:      s,
		pid:       f.nextPid,
		proc:      &fakeProc{},
		control:   &fakeControl{},
		heartMem:  mem,
		heartbeat: workerproto.Stamp(mem),
		stats:     workerproto.LoopWords(mem),
		appStats:  workerproto.AppStatsIn(mem),
		started:   time.Now(),
	}
	f.launched = append(f.launched, w)
	return w, nil
}

// boot starts the master's workers as Run does and has each say ready.
func (f *fakeMaster) boot() {
	f.slots[0].current = f.start(f.slots[0], "booting")
	f.say(f.slots[0].current, workerproto.Ready)
	for _, s := range f.slots[1:] {
		f.say(s.current, workerproto.Ready)
	}
	if !f.booted {
		f.t.Fatalf("not booted after every worker said ready")
	}
}

// readyAll has every worker not yet ready say so, slot by slot.
func (f *fakeMaster) readyAll() {
	for _, s := range f.slots {
		if s.current != nil && s.current.readyAt.IsZero() {
			f.say(s.current, workerproto.Ready)
		}
	}
}

func (f *fakeMaster) say(w *worker, line string) {
	f.t.Helper()
	if w == nil {
		f.t.Fatalf("no worker to say %q", line)
	}
	f.handle(event{w: w, line: line})
}

func (f *fakeMaster) exit(w *worker, status syscall.WaitStatus) {
	f.t.Helper()
	w.proc.(*fakeProc).status = status
	f.handle(event{w: w, exit: true})
	if !w.proc.(*fakeProc).reaped {
		f.t.Fatalf("%s: its exit handled, not reaped", w)
	}
}

// logged reports whether a log line holds text.
func (f *fakeMaster) logged(text string) bool {
	for _, line := range f.logs {
		if strings.Contains(line, text) {
			return true
		}
	}
	return false
}

func signals(w *worker) []syscall.Signal { return w.proc.(*fakeProc).signals }
func lines(w *worker) []string           { return w.control.(*fakeControl).lines }

const (
	exited1   = syscall.WaitStatus(1 << 8)
	exited0   = syscall.WaitStatus(0)
	segfault  = syscall.WaitStatus(syscall.SIGSEGV)
	sigkilled = syscall.WaitStatus(syscall.SIGKILL)
)

func TestMasterStateMachine(t *testing.T) {
	cases := []struct {
		name     string
		workers  int
		unbooted bool // run gets the master before its first worker starts
		tweak    func(*Config)
		run      func(t *testing.T, f *fakeMaster)
	}{
		{name: "crash: respawned at once, counted", workers: 2, run: func(t *testing.T, f *fakeMaster) {
			old := f.slots[0].current
			f.exit(old, segfault)
			now := f.slots[0].current
			if now == nil || now == old {
				t.Fatalf("slot 0 after a crash: %v", now)
			}
			if !f.logged("died: killed by signal 11") || !f.logged("started (respawn)") {
				t.Errorf("the crash and the respawn not logged")
			}
			if f.spawnCounts["crash"] != 1 || f.exitCounts["crash"] != 1 || f.live[old] || !f.live[now] {
				t.Errorf("spawns %v, exits %v", f.spawnCounts, f.exitCounts)
			}
			if !old.control.(*fakeControl).closed || old.heartbeat != nil {
				t.Errorf("an ended worker's control socket and heartbeat not released")
			}
			if f.slots[1].current.draining || len(lines(f.slots[1].current)) != 0 {
				t.Errorf("the other worker was told %v", lines(f.slots[1].current))
			}
		}},
		{name: "backoff: crashes in a row wait longer, a healthy run forgets them", workers: 1, run: func(t *testing.T, f *fakeMaster) {
			s := f.slots[0]
			f.exit(s.current, segfault) // after a healthy run: at once
			for _, delay := range []time.Duration{backoffBase, 2 * backoffBase, 4 * backoffBase} {
				f.exit(s.current, exited1) // before it was ready
				if s.current != nil {
					t.Fatalf("respawned at once after %d crashes", s.crashes)
				}
				due := s.respawnAt
				if wait := time.Until(due); wait <= 0 || wait > delay {
					t.Fatalf("respawn in %v, want up to %v", wait, delay)
				}
				f.sweep(due.Add(-time.Millisecond))
				if s.current != nil {
					t.Fatalf("respawned before the backoff of %v ended", delay)
				}
				f.sweep(due)
				if s.current == nil || !f.logged("started (respawn after backoff)") {
					t.Fatalf("not respawned once the backoff of %v ended", delay)
				}
			}
			if f.spawnCounts["crash"] != 4 {
				t.Errorf("spawns %v, want 4 crash", f.spawnCounts)
			}
			f.say(s.current, workerproto.Ready)
			f.sweep(s.current.readyAt.Add(healthyAfter + time.Second))
			if s.crashes != 0 {
				t.Fatalf("%d crashes remembered after a healthy run", s.crashes)
			}
			f.exit(s.current, segfault)
			if s.current == nil {
				t.Fatal("not respawned at once after a healthy run")
			}
		}},
		{name: "reload: one slot at a time, old workers drained", workers: 2, run: func(t *testing.T, f *fakeMaster) {
			old0, old1 := f.slots[0].current, f.slots[1].current
			f.signal(syscall.SIGHUP)
			new0 := f.slots[0].replacement
			if new0 == nil || f.reload != 0 || f.slots[1].replacement != nil {
				t.Fatalf("after SIGHUP: replacement %v, reload at %d", new0, f.reload)
			}
			f.say(new0, workerproto.Ready)
			if f.slots[0].current != new0 || !old0.draining || strings.Join(lines(old0), ",") != workerproto.Drain {
				t.Fatalf("slot 0 after its replacement was ready: current %v, old told %v", f.slots[0].current, lines(old0))
			}
			new1 := f.slots[1].replacement
			if new1 == nil || f.reload != 1 || old1.draining {
				t.Fatalf("slot 1 not next: replacement %v, reload at %d", new1, f.reload)
			}
			f.say(new1, workerproto.Ready)
			if f.reload != -1 || !f.logged("reload complete") || !old1.draining {
				t.Fatalf("reload at %d after the last slot", f.reload)
			}
			launched := len(f.launched)
			f.exit(old0, exited0)
			f.exit(old1, exited0)
			if len(f.launched) != launched || f.slots[0].current != new0 || f.slots[1].current != new1 {
				t.Errorf("a drained worker's exit started another")
			}
			if f.spawnCounts["reload"] != 2 || f.exitCounts["drained"] != 2 {
				t.Errorf("spawns %v, exits %v", f.spawnCounts, f.exitCounts)
			}
		}},
		{name: "reload aborted: a replacement that dies before ready", workers: 2, run: func(t *testing.T, f *fakeMaster) {
			old := f.slots[0].current
			f.signal(syscall.SIGHUP)
			f.exit(f.slots[0].replacement, exited1)
			if f.reload != -1 || !f.logged("reload aborted, the old workers keep serving") {
				t.Fatalf("reload at %d after its new worker died", f.reload)
			}
			if f.slots[0].current != old || old.draining || len(lines(old)) != 0 || f.slots[1].replacement != nil {
				t.Fatalf("the old worker was touched: told %v", lines(old))
			}
		}},
		{name: "reload refuses a worker of another heartbeat layout", workers: 1, run: func(t *testing.T, f *fakeMaster) {
			old := f.slots[0].current
			f.noLayout = true // the binary was replaced on disk
			f.signal(syscall.SIGHUP)
			stranger := f.slots[0].replacement
			f.say(stranger, workerproto.Backend+" epoll")
			f.say(stranger, workerproto.Ready)
			if got := signals(stranger); len(got) != 1 || got[0] != syscall.SIGKILL {
				t.Fatalf("a worker of another layout got signals %v, want one SIGKILL", got)
			}
			if !stranger.readyAt.IsZero() || stranger.backend != "" || f.slots[0].current != old || old.draining {
				t.Fatalf("its lines were taken: ready %v, backend %q", stranger.readyAt, stranger.backend)
			}
			if !f.logged("refused: its heartbeat file has no layout version") {
				t.Errorf("the refusal not logged")
			}
			f.exit(stranger, sigkilled)
			if f.reload != -1 || f.slots[0].current != old {
				t.Fatalf("reload at %d after its worker was refused", f.reload)
			}
		}},
		{name: "recycle: --max-requests drains the worker behind its replacement", workers: 1, tweak: func(c *Config) { c.MaxRequests = 100 }, run: func(t *testing.T, f *fakeMaster) {
			s := f.slots[0]
			old := s.current
			f.say(old, workerproto.Limit)
			if !old.draining || s.replacement == nil || f.spawnCounts["max_requests"] != 1 {
				t.Fatalf("after limit: draining %v, replacement %v, spawns %v", old.draining, s.replacement, f.spawnCounts)
			}
			f.say(s.replacement, workerproto.Ready)
			if s.current == old || len(lines(old)) != 0 {
				t.Fatalf("after the replacement was ready: current %v, the old one told %v (it drains already)", s.current, lines(old))
			}
			launched := len(f.launched)
			f.exit(old, exited0)
			if len(f.launched) != launched || f.exitCounts["drained"] != 1 || !f.logged("exit status 0 after draining") {
				t.Errorf("exits %v", f.exitCounts)
			}
		}},
		{name: "recycle: the old worker ends its drain before its replacement is ready", workers: 1, tweak: func(c *Config) { c.MaxRequests = 100 }, run: func(t *testing.T, f *fakeMaster) {
			s := f.slots[0]
			old := s.current
			f.say(old, workerproto.Limit)
			next := s.replacement
			f.exit(old, exited0)
			if s.current != nil || s.replacement != next || !f.logged("exit status 0 after draining") {
				t.Fatalf("after the old one exited: current %v, replacement %v", s.current, s.replacement)
			}
			f.say(next, workerproto.Ready)
			if s.current != next || s.replacement != nil || len(f.launched) != 2 {
				t.Fatalf("the replacement did not take the slot: current %v", s.current)
			}
		}},
		{name: "recycle: a replacement that fails to boot, then the old worker's end, backs off", workers: 1, tweak: func(c *Config) { c.MaxRequests = 100 }, run: func(t *testing.T, f *fakeMaster) {
			s := f.slots[0]
			old := s.current
			f.say(old, workerproto.Limit)
			f.exit(s.replacement, exited1)
			if s.replacement != nil || s.current != old || !f.logged("exit status 1 before it was ready") {
				t.Fatalf("after the replacement died: current %v, replacement %v", s.current, s.replacement)
			}
			f.exit(old, exited0)
			if !f.logged("after draining, with no replacement") || s.current == nil {
				t.Fatalf("no respawn after the drain with no replacement: current %v", s.current)
			}
			f.exit(s.current, exited1)
			if s.current != nil || s.respawnAt.IsZero() {
				t.Fatal("a second death in a row was not backed off")
			}
		}},
		{name: "--reload: a first boot that fails waits for a change", workers: 2, unbooted: true, tweak: func(c *Config) { c.Reload = &Reload{} }, run: func(t *testing.T, g *fakeMaster) {
			g.slots[0].current = g.start(g.slots[0], "booting")
			g.exit(g.slots[0].current, exited1)
			if g.err != nil || g.stopping || !g.awaitingFix || g.slots[0].current != nil {
				t.Fatalf("err %v, stopping %v, awaiting a fix %v", g.err, g.stopping, g.awaitingFix)
			}
			g.signal(syscall.SIGHUP) // a fix the watcher cannot see
			if g.awaitingFix || g.slots[0].current == nil {
				t.Fatal("SIGHUP did not boot again")
			}
			g.readyAll()
			if !g.booted || g.slots[1].current == nil {
				t.Fatal("the second boot did not start every slot")
			}
		}},
		{name: "recycle: a draining worker past its grace is killed, once", workers: 1, tweak: func(c *Config) { c.MaxRequests, c.WorkerTimeout = 100, 0 }, run: func(t *testing.T, f *fakeMaster) {
			old := f.slots[0].current
			f.say(old, workerproto.Limit)
			f.say(f.slots[0].replacement, workerproto.Ready)
			killAt := old.killAt
			f.sweep(killAt.Add(-time.Millisecond))
			if len(signals(old)) != 0 {
				t.Fatal("killed within its grace")
			}
			f.sweep(killAt.Add(time.Millisecond))
			f.sweep(killAt.Add(time.Second))
			if got := signals(old); len(got) != 1 || got[0] != syscall.SIGKILL {
				t.Fatalf("a drain past its grace got %v, want one SIGKILL", got)
			}
			f.exit(old, sigkilled)
			if f.slots[0].current == old || f.exitCounts["drained"] != 1 {
				t.Errorf("exits %v", f.exitCounts)
			}
		}},
		{name: "heartbeat: a loop that stopped turning is killed and replaced", workers: 1, tweak: func(c *Config) { c.WorkerTimeout = time.Second }, run: func(t *testing.T, f *fakeMaster) {
			w := f.slots[0].current
			w.heartbeat.Store(w.readyAt.UnixNano())
			f.sweep(w.readyAt.Add(500 * time.Millisecond))
			if len(signals(w)) != 0 {
				t.Fatalf("killed within --worker-timeout")
			}
			f.sweep(w.readyAt.Add(2 * time.Second))
			f.sweep(w.readyAt.Add(3 * time.Second))
			if got := signals(w); len(got) != 1 || got[0] != syscall.SIGKILL {
				t.Fatalf("signals %v, want one SIGKILL", got)
			}
			f.exit(w, sigkilled)
			if f.slots[0].current == nil || f.slots[0].current == w || f.exitCounts["timeout"] != 1 {
				t.Errorf("not replaced: exits %v", f.exitCounts)
			}
		}},
		{name: "scale: SIGTTIN adds a slot, SIGTTOU drains and closes it", workers: 1, run: func(t *testing.T, f *fakeMaster) {
			f.signal(syscall.SIGTTIN)
			if len(f.slots) != 2 || f.slots[1].current == nil || f.spawnCounts["scale"] != 1 {
				t.Fatalf("after SIGTTIN: %d slots, spawns %v", len(f.slots), f.spawnCounts)
			}
			added := f.slots[1].current
			f.say(added, workerproto.Ready)
			f.signal(syscall.SIGTTOU)
			if !f.slots[1].removed || !added.draining || strings.Join(lines(added), ",") != workerproto.Drain {
				t.Fatalf("after SIGTTOU: removed %v, told %v", f.slots[1].removed, lines(added))
			}
			if f.slots[0].current.draining {
				t.Fatal("SIGTTOU drained the first worker")
			}
			launched := len(f.launched)
			f.exit(added, exited0)
			if len(f.launched) != launched || f.slots[1].listenFD != -1 || !f.logged("(slot removed)") {
				t.Fatalf("the removed slot's worker was replaced, or its socket kept")
			}
			f.signal(syscall.SIGTTOU)
			if !f.logged("ignored (1 worker)") || f.slots[0].removed {
				t.Fatal("SIGTTOU removed the last worker")
			}
		}},
		{name: "a waiter that had to reap: said once, the exit handled alike", workers: 2, run: func(t *testing.T, f *fakeMaster) {
			for _, w := range []*worker{f.slots[0].current, f.slots[1].current} {
				w.proc.(*fakeProc).status = segfault
				f.handle(event{w: w, exit: true, waitErr: syscall.EPERM})
			}
			warnings := 0
			for _, line := range f.logs {
				if strings.Contains(line, "without reaping it: operation not permitted") {
					warnings++
				}
			}
			if warnings != 1 || f.exitCounts["crash"] != 2 || f.slots[0].current == nil || f.slots[1].current == nil {
				t.Fatalf("%d warnings, exits %v", warnings, f.exitCounts)
			}
		}},
		{name: "boot: a first worker that dies before ready stops the master", workers: 2, unbooted: true, run: func(t *testing.T, g *fakeMaster) {
			g.slots[0].current = g.start(g.slots[0], "booting")
			g.exit(g.slots[0].current, exited1)
			bootErr, ok := g.err.(*BootError)
			if !ok || bootErr.Slot != 0 || bootErr.Code != 1 || !g.stopping || !g.done() {
				t.Fatalf("err %v, stopping %v", g.err, g.stopping)
			}
			if len(g.launched) != 1 {
				t.Fatalf("%d workers started after the first failed to boot", len(g.launched))
			}
		}},
		{name: "stop: ready workers told, booting ones signalled, none after reaped", workers: 2, run: func(t *testing.T, f *fakeMaster) {
			f.exit(f.slots[1].current, segfault) // its respawn boots
			booting := f.slots[1].current
			f.signal(syscall.SIGTERM)
			ready := f.slots[0].current
			if strings.Join(lines(ready), ",") != workerproto.Stop || len(signals(ready)) != 0 {
				t.Errorf("a ready worker got lines %v and signals %v, want the stop line", lines(ready), signals(ready))
			}
			if got := signals(booting); len(got) != 1 || got[0] != syscall.SIGTERM {
				t.Errorf("a booting worker got %v, want SIGTERM", got)
			}
			f.exit(booting, exited0)
			f.signal(syscall.SIGINT) // again: kill what is left
			if got := signals(ready); len(got) != 1 || got[0] != syscall.SIGKILL {
				t.Errorf("the second SIGINT sent %v", got)
			}
			f.exit(ready, sigkilled)
			if !f.done() || f.err != nil {
				t.Fatalf("done %v, err %v", f.done(), f.err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMaster(t, tc.workers, tc.tweak)
			if !tc.unbooted {
				f.boot()
			}
			tc.run(t, f)
		})
	}
}
