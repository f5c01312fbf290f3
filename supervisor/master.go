package supervisor

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/internal/configerr"
	"github.com/m0serve/m0serve/internal/metrics"
	"github.com/m0serve/m0serve/internal/workerproto"
	"github.com/m0serve/m0serve/realtime"
)

// Backoff for a worker that keeps dying after it was ready: the first
// respawn is at once, the next ones wait backoffBase×2^k up to backoffMax,
// and k is forgotten once a worker has stayed up healthyAfter.
const (
	backoffBase  = 100 * time.Millisecond
	backoffMax   = 30 * time.Second
	healthyAfter = 30 * time.Second
	// killGrace is how long past --graceful-timeout a draining worker may
	// take before the master kills it.
	killGrace  = 5 * time.Second
	sweepEvery = 100 * time.Millisecond
	// busyAfter: a worker whose handler threads have all been in the app
	// this long gets no new connections while another has room
	// (rebalance). Requests quicker than this, however many, never make
	// it busy: steady load keeps the kernel's even spread.
	busyAfter = 100 * time.Millisecond
)

// slot is one place for a worker: with reuseport its own socket, which
// every replacement of the slot's worker inherits.
type slot struct {
	index       int
	listenFD    int
	current     *worker // serving, or booting to serve
	replacement *worker // booting to take over from current
	crashes     int     // k of the backoff
	respawnAt   time.Time
	removed     bool // SIGTTOU: gone once its workers are
	shut        bool // stopping: its socket no longer listens (stopListening)
	// emptyBy is set while a removed slot's socket gets no new
	// connections and its worker still accepts what is queued: the worker
	// drains once the queue is empty, or at emptyBy.
	emptyBy time.Time
	// inbox and outbox are the two ends of the slot's handoff socketpair
	// (handoff.go): its workers receive on inbox, every worker sends on
	// outbox. -1: none.
	inbox, outbox int
}

type master struct {
	cfg     Config
	logf    func(string, ...any)
	command []string // a worker's program, then its argv before the Args
	url     string
	port    int
	rand    *rand.Rand
	spawner spawner
	// launch starts a worker for a slot: spawn, or the tests' fakes.
	launch func(*slot) (*worker, error)
	events chan event
	// bus is --realtime's (bus.go); nil without.
	bus *realtime.Bus
	// stopPGListen ends --pg-listen's listener (bus.go).
	stopPGListen func()

	shared   int // the one socket of --listener shared, or -1
	slots    []*slot
	live     map[*worker]bool
	booted   bool // every first worker was ready once
	stopping bool
	stopBy   time.Time
	reload   int    // the slot a rolling reload is at, or -1
	steered  string // the positions a BPF program sends connections to (steer), or ""
	// announced: the slots whose workers accept, as last logged ("":
	// all of them).
	announced string
	// busyAside: the steering leaves busy workers out.
	busyAside bool

	nextRSS time.Time
	err     error
	// waitWarned: a refused waitid was logged (once).
	waitWarned bool

	// sharedListener is shared's: with --uds, --fd or systemd's socket,
	// always.
	sharedListener Socket
	// reloadPending: a source changed (--reload); a rolling reload
	// starts once none is under way.
	reloadPending bool
	// awaitingFix: with --reload, a first boot failed; the next change
	// to the sources boots the slots left without a worker.
	awaitingFix bool

	// The metrics (--metrics-address): counts by reason, the counters of
	// workers gone, and scrapes waiting for a snapshot.
	spawnCounts map[string]int
	exitCounts  map[string]int
	gone        metrics.Counters // the counters of workers gone
	scrapes     chan chan metricsSnapshot

	// board and boardFile are the handoff's board (handoff.go), nil until
	// the first slot; handoffOff: it could not be made.
	board      []byte
	boardFile  *os.File
	handoffOff bool
}

// Run starts the workers and supervises them until SIGTERM or SIGINT has
// drained them (nil), a worker failed to boot (a *BootError), or the
// master could not start.
func Run(cfg Config, logf func(string, ...any)) error {
	if cfg.Server.SharedListener() {
		// One socket given (or one path): every worker accepts on it.
		cfg.Listener = "shared"
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	command := cfg.Command
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this program to start workers: %w", err)
		}
		command = []string{exe, os.Args[0]}
	}
	m := newMaster(cfg, logf)
	m.command, m.spawner = command, newSpawner()
	m.launch = m.spawn
	if err := m.openBus(); err != nil {
		return err
	}
	defer m.closeBus()
	// Signals first: one that comes while the workers boot is not lost.
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP,
		syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGUSR1)
	defer signal.Stop(signals)

	port := cfg.Server.Port()
	for i := 0; i < cfg.Workers; i++ {
		if err := m.addSlot(&port); err != nil {
			m.closeSockets()
			return err
		}
	}
	defer m.closeSockets()
	if cfg.PidFile != "" {
		if err := os.WriteFile(cfg.PidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return &configerr.Error{Flag: "pid-file", Reason: err.Error()}
		}
		defer os.Remove(cfg.PidFile)
	}
	listener := "one SO_REUSEPORT socket per worker"
	if cfg.Listener == "shared" {
		listener = "one socket shared by the workers"
	}
	logf("m0serve: master (pid %d) on %s: %s, %s (Press CTRL+C to quit)", os.Getpid(), m.url, workerSlots(cfg.Workers), listener)

	if addr := cfg.Server.MetricsAddress(); addr != "" {
		stop, err := m.serveMetrics(addr)
		if err != nil {
			return err
		}
		defer stop()
	}

	var changes chan string // nil without --reload: never ready
	if cfg.Reload != nil {
		watcher, err := watchSources(*cfg.Reload, logf)
		if err != nil {
			return err
		}
		defer watcher.close()
		changes = watcher.changes
		logf("m0serve: --reload: watching %s for changes (not for production)", strings.Join(cfg.Reload.Dirs, ", "))
	}

	// The first worker boots alone: an app that does not import shows its
	// traceback once, not once per worker.
	m.slots[0].current = m.start(m.slots[0], "booting")
	sweep := time.NewTicker(sweepEvery)
	defer sweep.Stop()
	for !m.done() {
		select {
		case e := <-m.events:
			m.handle(e)
		case sig := <-signals:
			m.signal(sig.(syscall.Signal))
		case now := <-sweep.C:
			m.sweep(now)
		case reply := <-m.scrapes:
			reply <- m.snapshot()
		case path := <-changes:
			m.logf("m0serve: %s changed: reloading", path)
			m.reloadPending = true
			if m.awaitingFix {
				m.bootAgain()
			}
		}
		if m.reloadPending && m.reload < 0 && m.booted && !m.stopping {
			m.reloadPending = false
			m.startReload("source change")
		}
		if err := m.rebalance(); err != nil {
			m.logf("m0serve: error: %v", err)
		}
	}
	if m.err == nil {
		logf("m0serve: stopped")
	}
	return m.err
}

func newMaster(cfg Config, logf func(string, ...any)) *master {
	return &master{
		cfg:    cfg,
		logf:   logf,
		rand:   rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))),
		events: make(chan event, 64),
		shared: -1,
		live:   map[*worker]bool{},
		reload: -1,

		spawnCounts: map[string]int{},
		exitCounts:  map[string]int{},
		scrapes:     make(chan chan metricsSnapshot),
	}
}

// done: stopping and every worker has exited.
func (m *master) done() bool { return m.stopping && len(m.live) == 0 }

// addSlot opens the slot's socket (or takes the shared one). A port of 0
// becomes the one the first socket got, for the others to join.
func (m *master) addSlot(port *int) error {
	s := &slot{index: len(m.slots), listenFD: m.shared}
	if s.listenFD < 0 {
		listener, err := m.cfg.Server.Listen(*port, m.cfg.Listener == "reuseport")
		if err != nil {
			return err
		}
		*port = listener.Port
		m.port = *port
		m.url = listener.URL
		s.listenFD = listener.FD
		if m.cfg.Listener == "shared" {
			m.shared = listener.FD
			m.sharedListener = listener
		}
	}
	m.slots = append(m.slots, s)
	m.openHandoff(s)
	return nil
}

func (m *master) closeSockets() {
	m.closeHandoff()
	for _, s := range m.slots {
		if s.listenFD != m.shared {
			unix.Close(s.listenFD)
		}
	}
	if m.shared >= 0 {
		m.sharedListener.Close() // a --uds socket's file too
	}
}

// start spawns the slot's worker (current), or logs why it could not.
func (m *master) start(s *slot, why string) *worker {
	w, err := m.launch(s)
	if err != nil {
		m.logf("m0serve: error: worker %d: %v", s.index, err)
		if !m.booted {
			m.fail(err)
		}
		// A slot left without a worker tries again (sweep).
		s.respawnAt = time.Now().Add(time.Second)
		return nil
	}
	m.live[w] = true
	m.spawnCounts[spawnReason(why)]++
	m.logf("m0serve: %s: started (%s)", w, why)
	return w
}

func (m *master) handle(e event) {
	w := e.w
	if e.exit {
		if e.waitErr != nil && !m.waitWarned {
			m.waitWarned = true
			m.logf("m0serve: warning: %s: waiting for a worker's end without reaping it: %v; the waiter reaps instead", w, e.waitErr)
		}
		// Reaped here, on the goroutine that sends every signal.
		status := w.proc.reap()
		if status.Exited() {
			w.exitCode = status.ExitStatus()
		}
		m.exited(w, describeExit(status))
		return
	}
	if w.exited || !m.layoutChecked(w) {
		return // a line that came after its exit, or from a worker refused
	}
	if backend, ok := strings.CutPrefix(e.line, workerproto.Backend+" "); ok {
		w.backend = backend
		return
	}
	if capacity, ok := strings.CutPrefix(e.line, workerproto.Capacity+" "); ok {
		w.capacity, _ = strconv.Atoi(capacity)
		return
	}
	switch e.line {
	case workerproto.Stopping:
		w.stoppedAccepting = true
		m.stopListening()
	case workerproto.Ready:
		m.ready(w)
	case workerproto.Limit:
		m.logf("m0serve: %s: served its --max-requests; draining", w)
		w.draining = true
		w.killAt = time.Now().Add(m.cfg.Server.GracefulTimeout() + killGrace)
		m.retire(w, "--max-requests")
	case workerproto.Stuck:
		m.logf("m0serve: warning: %s: a request outlived --request-timeout; draining", w)
		w.draining = true
		w.killAt = time.Now().Add(m.cfg.Server.GracefulTimeout() + killGrace)
		m.retire(w, "--request-timeout")
	}
}

// layoutChecked takes what w says only once its heartbeat file is of
// this master's layout: after the binary was replaced on disk, a reload
// (or a respawn) starts workers of the new binary, whose counters and
// stamps the master would misread. Such a worker is killed before it is
// ready; its exit aborts the reload (the old workers keep serving) or,
// for a slot without a worker, is a failed start that backs off.
func (m *master) layoutChecked(w *worker) bool {
	if w.layoutOK {
		return true
	}
	if w.refused {
		return false
	}
	if err := workerproto.CheckLayout(w.heartMem); err != nil {
		m.logf("m0serve: error: %s: refused: %v", w, err)
		w.refused = true
		w.proc.signal(syscall.SIGKILL)
		return false
	}
	w.layoutOK = true
	return true
}

func (m *master) ready(w *worker) {
	if w.exited {
		return
	}
	w.readyAt = time.Now()
	s := w.slot
	m.logf("m0serve: %s: ready in %v", w, w.readyAt.Sub(w.started).Round(time.Millisecond))
	if m.stopping {
		return
	}
	if s.replacement == w {
		old := s.current
		s.current, s.replacement = w, nil
		if old != nil && !old.exited && !old.draining {
			m.drain(old)
		}
		if m.reload == s.index {
			m.advanceReload()
		}
	}
	if !m.booted {
		if s.index == 0 {
			for _, other := range m.slots[1:] {
				other.current = m.start(other, "booting")
			}
		}
		m.booted = true
		for _, other := range m.slots {
			if other.current == nil || other.current.readyAt.IsZero() {
				m.booted = false
			}
		}
		if m.booted {
			m.logf("m0serve: %s ready", workers(len(m.slots)))
		}
	}
}

// drain tells w to stop accepting and finish: its slot has another worker.
func (m *master) drain(w *worker) {
	w.draining = true
	w.killAt = time.Now().Add(m.cfg.Server.GracefulTimeout() + killGrace)
	w.send(workerproto.Drain)
}

// retire replaces w, the slot's worker: the replacement is started now,
// and w drains once it is ready (unless it drains already: at its request
// limit it stopped accepting by itself, and the socket holds what comes
// meanwhile).
func (m *master) retire(w *worker, why string) {
	s := w.slot
	if m.stopping || s.current != w || s.replacement != nil || s.removed {
		return
	}
	s.replacement = m.start(s, "replacing pid "+strconv.Itoa(w.pid)+": "+why)
}

func (m *master) exited(w *worker, status string) {
	delete(m.live, w)
	m.handoffEnded(w)
	m.exitCounts[exitReason(w)]++
	loopCounters := w.stats.Read()
	m.gone.Add(&loopCounters, w.appStats)
	// What was in the app when it ended, last on the line.
	note := inFlightNote(w, time.Now())
	logf := func(format string, args ...any) { m.logf(format+"%s", append(args, note)...) }
	w.release()
	s := w.slot
	switch {
	case m.stopping:
		logf("m0serve: %s: %s", w, status)
		m.stopListening()
	case w.readyAt.IsZero() && !m.booted && m.cfg.Reload != nil:
		// As uvicorn --reload does: the traceback is above; the fix is
		// what the developer does next.
		logf("m0serve: warning: %s: %s before it was ready; --reload: waiting for a change to the sources", w, status)
		if s.current == w {
			s.current = nil
		}
		m.awaitingFix = true
	case w.readyAt.IsZero() && !m.booted:
		logf("m0serve: error: %s: %s before it was ready; stopping", w, status)
		m.fail(&BootError{Slot: s.index, Pid: w.pid, Status: status, Code: w.exitCode})
	case w == s.replacement:
		s.replacement = nil
		if m.reload >= 0 {
			logf("m0serve: error: %s: %s before it was ready: reload aborted, the old workers keep serving", w, status)
			m.reload = -1
		} else {
			logf("m0serve: error: %s: %s before it was ready", w, status)
		}
	case w == s.current:
		s.current = nil
		if s.removed {
			logf("m0serve: %s: %s (slot removed)", w, status)
			m.closeSlot(s)
			return
		}
		if w.draining && s.replacement != nil {
			logf("m0serve: %s: %s after draining", w, status)
			return
		}
		if w.draining && !w.heartbeatKilled {
			// Its replacement failed to boot: start another, backing off.
			logf("m0serve: warning: %s: %s after draining, with no replacement", w, status)
			m.scheduleRespawn(s)
			return
		}
		why := "died"
		if w.readyAt.IsZero() {
			why = "died before it was ready"
		}
		logf("m0serve: error: %s: %s: %s", w, why, status)
		if s.replacement == nil {
			m.scheduleRespawn(s)
		}
	default:
		// An old worker that drained after its replacement took over.
		logf("m0serve: %s: %s after draining", w, status)
		if s.removed && s.current == nil && s.replacement == nil {
			m.closeSlot(s)
		}
	}
}

// bootAgain starts the first boot again after a change to the sources
// (--reload): slot 0 first, as at start, when it has no worker (ready
// starts the others); else the slots that failed theirs. The reload
// left pending then replaces the workers that did boot, once all have.
func (m *master) bootAgain() {
	m.awaitingFix = false
	if first := m.slots[0]; first.current == nil {
		m.reloadPending = false // nothing booted to replace
		first.current = m.start(first, "booting")
		return
	}
	for _, s := range m.slots[1:] {
		if s.current == nil && !s.removed {
			s.current = m.start(s, "booting")
		}
	}
}

// scheduleRespawn: at once after a healthy run, then backing off.
func (m *master) scheduleRespawn(s *slot) {
	delay := backoff(s.crashes)
	s.crashes = min(s.crashes+1, 20)
	if delay == 0 {
		s.current = m.start(s, "respawn")
		return
	}
	m.logf("m0serve: warning: worker %d: respawning in %v (backoff)", s.index, delay)
	s.respawnAt = time.Now().Add(delay)
}

// backoff is the wait before the respawn that follows crashes deaths in a
// row: none for the first, then backoffBase doubling up to backoffMax.
func backoff(crashes int) time.Duration {
	if crashes == 0 {
		return 0
	}
	return min(backoffBase<<(crashes-1), backoffMax)
}

func (m *master) fail(err error) {
	if m.err == nil {
		m.err = err
	}
	m.stop(syscall.SIGKILL)
}

// stop signals every worker; SIGTERM drains them, SIGKILL ends them. A
// ready worker is told to drain on its control socket instead of by
// SIGTERM: one the operator signalled too (systemd's default
// KillMode=control-group signals every process of the service) would
// take the master's SIGTERM as its second, "exit now".
func (m *master) stop(sig syscall.Signal) {
	if !m.stopping {
		m.stopping = true
		m.stopBy = time.Now().Add(m.cfg.Server.GracefulTimeout() + killGrace)
	}
	m.reload = -1
	for w := range m.live {
		if sig == syscall.SIGTERM && !w.readyAt.IsZero() {
			w.send(workerproto.Stop)
			continue
		}
		w.proc.signal(sig)
	}
	m.stopListening()
}
