package supervisor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/server"
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
	// emptyBy is set while a removed slot's socket gets no new
	// connections and its worker still accepts what is queued: the worker
	// drains once the queue is empty, or at emptyBy.
	emptyBy time.Time
}

type master struct {
	cfg     Config
	logf    func(string, ...any)
	exe     string
	url     string
	port    int
	rand    *rand.Rand
	spawner spawner
	events  chan event

	shared   int // the one socket of --listener shared, or -1
	slots    []*slot
	live     map[*worker]bool
	booted   bool // every first worker was ready once
	stopping bool
	stopBy   time.Time
	reload   int    // the slot a rolling reload is at, or -1
	steered  string // the positions a BPF program sends connections to (steer), or ""

	nextRSS time.Time
	err     error
}

// Run starts the workers and supervises them until SIGTERM or SIGINT has
// drained them (nil), a worker failed to boot (a *BootError), or the
// master could not start.
func Run(cfg Config, logf func(string, ...any)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to start workers: %w", err)
	}
	m := &master{
		cfg:     cfg,
		logf:    logf,
		exe:     exe,
		rand:    rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))),
		spawner: newSpawner(),
		events:  make(chan event, 64),
		shared:  -1,
		live:    map[*worker]bool{},
		reload:  -1,
	}
	// Signals first: one that comes while the workers boot is not lost.
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP,
		syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGUSR1)
	defer signal.Stop(signals)

	port := cfg.Server.Port
	for i := 0; i < cfg.Workers; i++ {
		if err := m.addSlot(&port); err != nil {
			m.closeSockets()
			return err
		}
	}
	defer m.closeSockets()
	if cfg.PidFile != "" {
		if err := os.WriteFile(cfg.PidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return &server.ConfigError{Flag: "pid-file", Reason: err.Error()}
		}
		defer os.Remove(cfg.PidFile)
	}
	listener := "one SO_REUSEPORT socket per worker"
	if cfg.Listener == "shared" {
		listener = "one socket shared by the workers"
	}
	logf("m0serve: master (pid %d) on %s: %d workers (slots 0-%d), %s", os.Getpid(), m.url, cfg.Workers, cfg.Workers-1, listener)

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
		}
		if err := m.rebalance(); err != nil {
			m.logf("m0serve: %v", err)
		}
	}
	if m.err == nil {
		logf("m0serve: stopped")
	}
	return m.err
}

// done: stopping and every worker has exited.
func (m *master) done() bool { return m.stopping && len(m.live) == 0 }

// addSlot opens the slot's socket (or takes the shared one). A port of 0
// becomes the one the first socket got, for the others to join.
func (m *master) addSlot(port *int) error {
	s := &slot{index: len(m.slots), listenFD: m.shared}
	if s.listenFD < 0 {
		fd, bound, err := server.Listen(&m.cfg.Server, *port, m.cfg.Listener == "reuseport")
		if err != nil {
			return err
		}
		*port = int(bound.Port())
		m.port = *port
		m.url = "http://" + net.JoinHostPort(bound.Addr().String(), strconv.Itoa(*port))
		s.listenFD = fd
		if m.cfg.Listener == "shared" {
			m.shared = fd
		}
	}
	m.slots = append(m.slots, s)
	return nil
}

func (m *master) closeSockets() {
	for _, s := range m.slots {
		if s.listenFD != m.shared {
			unix.Close(s.listenFD)
		}
	}
	if m.shared >= 0 {
		unix.Close(m.shared)
	}
}

// start spawns the slot's worker (current), or logs why it could not.
func (m *master) start(s *slot, why string) *worker {
	w, err := m.spawn(s)
	if err != nil {
		m.logf("m0serve: worker %d: %v", s.index, err)
		if !m.booted {
			m.fail(err)
		}
		// A slot left without a worker tries again (sweep).
		s.respawnAt = time.Now().Add(time.Second)
		return nil
	}
	m.live[w] = true
	m.logf("m0serve: %s: started (%s)", w, why)
	return w
}

func (m *master) handle(e event) {
	w := e.w
	if e.exit != nil {
		m.exited(w, e.status)
		return
	}
	switch e.line {
	case server.WorkerReady:
		m.ready(w)
	case server.WorkerLimit:
		m.logf("m0serve: %s: served its --max-requests; draining", w)
		w.draining = true
		w.killAt = time.Now().Add(m.cfg.Server.GracefulTimeout + killGrace)
		m.retire(w, "--max-requests")
	}
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
			m.logf("m0serve: %d workers ready", len(m.slots))
		}
	}
}

// drain tells w to stop accepting and finish: its slot has another worker.
func (m *master) drain(w *worker) {
	w.draining = true
	w.killAt = time.Now().Add(m.cfg.Server.GracefulTimeout + killGrace)
	w.send(server.WorkerDrain)
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
	w.release()
	s := w.slot
	switch {
	case m.stopping:
		m.logf("m0serve: %s: %s", w, status)
	case w.readyAt.IsZero() && !m.booted:
		m.logf("m0serve: %s: %s before it was ready; stopping", w, status)
		m.fail(&BootError{Slot: s.index, Pid: w.pid, Status: status})
	case w == s.replacement:
		s.replacement = nil
		if m.reload >= 0 {
			m.logf("m0serve: %s: %s before it was ready: reload aborted, the old workers keep serving", w, status)
			m.reload = -1
		} else {
			m.logf("m0serve: %s: %s before it was ready", w, status)
		}
	case w == s.current:
		s.current = nil
		if s.removed {
			m.logf("m0serve: %s: %s (slot removed)", w, status)
			m.closeSlot(s)
			return
		}
		if w.draining && s.replacement != nil {
			m.logf("m0serve: %s: %s after draining", w, status)
			return
		}
		if w.draining && !w.heartbeatKilled {
			// Its replacement failed to boot: start another, backing off.
			m.logf("m0serve: %s: %s after draining, with no replacement", w, status)
			m.scheduleRespawn(s)
			return
		}
		why := "died"
		if w.readyAt.IsZero() {
			why = "died before it was ready"
		}
		m.logf("m0serve: %s: %s: %s", w, why, status)
		if s.replacement == nil {
			m.scheduleRespawn(s)
		}
	default:
		// An old worker that drained after its replacement took over.
		m.logf("m0serve: %s: %s after draining", w, status)
		if s.removed && s.current == nil && s.replacement == nil {
			m.closeSlot(s)
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
	m.logf("m0serve: worker %d: respawning in %v (backoff)", s.index, delay)
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

// stop signals every worker; SIGTERM drains them, SIGKILL ends them.
func (m *master) stop(sig syscall.Signal) {
	if !m.stopping {
		m.stopping = true
		m.stopBy = time.Now().Add(m.cfg.Server.GracefulTimeout + killGrace)
	}
	m.reload = -1
	for w := range m.live {
		syscall.Kill(w.pid, sig)
	}
}

func (m *master) signal(sig syscall.Signal) {
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT:
		if m.stopping && sig == syscall.SIGINT {
			m.logf("m0serve: %v again: killing %d workers", sig, len(m.live))
			m.stop(syscall.SIGKILL)
			return
		}
		if m.stopping {
			return
		}
		m.logf("m0serve: %v: draining %d workers (up to %v)", sig, len(m.live), m.cfg.Server.GracefulTimeout)
		m.stop(syscall.SIGTERM)
	case syscall.SIGQUIT:
		m.logf("m0serve: %v: killing %d workers", sig, len(m.live))
		m.stop(syscall.SIGKILL)
	case syscall.SIGHUP:
		if m.stopping || !m.booted {
			m.logf("m0serve: %v: ignored while %s", sig, map[bool]string{true: "stopping", false: "booting"}[m.stopping])
			return
		}
		if m.reload >= 0 {
			m.logf("m0serve: %v: a reload is already under way (slot %d)", sig, m.reload)
			return
		}
		m.logf("m0serve: %v: rolling reload of %d workers, one slot at a time", sig, len(m.slots))
		m.reload = -1
		m.advanceReload()
	case syscall.SIGTTIN:
		if m.stopping || len(m.slots) >= maxWorkers {
			return
		}
		if m.removing() {
			// Its socket must leave the group first (steer's order).
			m.logf("m0serve: %v: ignored while a worker is being removed; send it again", sig)
			return
		}
		port := m.port
		if err := m.addSlot(&port); err != nil {
			m.logf("m0serve: %v: adding a worker: %v", sig, err)
			return
		}
		s := m.slots[len(m.slots)-1]
		m.logf("m0serve: %v: one worker more (%d)", sig, len(m.activeSlots()))
		s.current = m.start(s, "SIGTTIN")
	case syscall.SIGTTOU:
		active := m.activeSlots()
		if m.stopping || len(active) <= 1 {
			m.logf("m0serve: %v: ignored (%d workers)", sig, len(active))
			return
		}
		s := active[len(active)-1]
		s.removed = true
		m.logf("m0serve: %v: one worker fewer (%d)", sig, len(active)-1)
		if m.cfg.Listener == "reuseport" && s.current != nil {
			// New connections go to the other sockets; the worker takes
			// what is queued in its own before it drains (sweep).
			if err := m.rebalance(); err == nil {
				s.emptyBy = time.Now().Add(m.cfg.Server.GracefulTimeout)
				return
			} else {
				m.logf("m0serve: %v: %v; connections queued for worker %d may be reset", sig, err, s.index)
			}
		}
		m.drainRemoved(s)
	case syscall.SIGUSR1:
		m.logf("m0serve: %v: reopening log files", sig)
		if err := server.ReopenLogFiles(&m.cfg.Server); err != nil {
			m.logf("m0serve: reopening log files: %v", err)
		}
		for w := range m.live {
			w.send(server.WorkerReopen)
		}
	}
}

// rebalance sends new connections (with reuseport) only to the sockets of
// slots whose worker accepts: not to a slot whose worker died and is not
// yet replaced (what is queued there waits for the replacement), stopped
// at its request limit, or is being removed. While every slot accepts,
// the kernel's own hashing is left alone.
func (m *master) rebalance() error {
	if m.cfg.Listener != "reuseport" || !m.booted || m.stopping {
		return nil
	}
	var positions, slots []int
	everyone := true
	fd, position := -1, 0
	for _, s := range m.slots {
		if s.listenFD < 0 {
			continue // closed: out of the group
		}
		w := s.current
		if !s.removed && w != nil && !w.readyAt.IsZero() && !w.draining {
			positions = append(positions, position)
			slots = append(slots, s.index)
			fd = s.listenFD
		} else {
			everyone = false
		}
		position++
	}
	key := fmt.Sprint(positions)
	if len(positions) == 0 || everyone && m.steered == "" || key == m.steered {
		return nil // nobody accepts (leave them queued), or nothing changed
	}
	if err := steer(fd, positions); err != nil {
		return err
	}
	m.steered = key
	m.logf("m0serve: new connections go to workers %s", strings.Trim(fmt.Sprint(slots), "[]"))
	return nil
}

// drainRemoved drains the workers of a slot SIGTTOU removed; its socket
// closes once they are gone.
func (m *master) drainRemoved(s *slot) {
	s.emptyBy = time.Time{}
	if s.replacement != nil {
		m.drain(s.replacement)
	}
	if s.current == nil {
		m.closeSlot(s)
	} else if !s.current.draining {
		m.drain(s.current)
	}
}

// removing reports a slot removed whose socket is still open.
func (m *master) removing() bool {
	for _, s := range m.slots {
		if s.removed && s.listenFD >= 0 {
			return true
		}
	}
	return false
}

// advanceReload starts the replacement for the next slot of a reload.
func (m *master) advanceReload() {
	for next := m.reload + 1; next < len(m.slots); next++ {
		s := m.slots[next]
		if s.removed || s.current == nil || s.replacement != nil {
			continue
		}
		m.reload = next
		s.replacement = m.start(s, "reload")
		if s.replacement == nil {
			m.logf("m0serve: reload aborted at worker %d", next)
			m.reload = -1
		}
		return
	}
	m.reload = -1
	m.logf("m0serve: reload complete")
}

func (m *master) activeSlots() []*slot {
	var active []*slot
	for _, s := range m.slots {
		if !s.removed {
			active = append(active, s)
		}
	}
	return active
}

// closeSlot closes a removed slot's socket once its workers are gone.
// What its queue still held is reset, unless net.ipv4.tcp_migrate_req
// moves it to the other sockets.
func (m *master) closeSlot(s *slot) {
	if s.listenFD != m.shared && s.listenFD >= 0 {
		unix.Close(s.listenFD)
	}
	s.listenFD = -1
}

// sweep runs every sweepEvery: respawns that are due, heartbeats,
// lifetimes, drains past their grace, memory.
func (m *master) sweep(now time.Time) {
	if m.stopping {
		if now.After(m.stopBy) && len(m.live) > 0 {
			m.logf("m0serve: %d workers still running after %v: killing them", len(m.live), m.cfg.Server.GracefulTimeout+killGrace)
			m.stopBy = now.Add(time.Hour)
			for w := range m.live {
				syscall.Kill(w.pid, syscall.SIGKILL)
			}
		}
		return
	}
	sampleRSS := m.cfg.MaxWorkerRSS > 0 && !now.Before(m.nextRSS)
	if sampleRSS {
		m.nextRSS = now.Add(m.cfg.RSSCheckInterval)
	}
	for _, s := range m.slots {
		if s.removed {
			if !s.emptyBy.IsZero() {
				if n, err := queued(s.listenFD); err != nil || n == 0 || now.After(s.emptyBy) {
					m.drainRemoved(s)
				}
			}
			continue
		}
		if s.current == nil && s.replacement == nil && !s.respawnAt.IsZero() && !now.Before(s.respawnAt) {
			s.respawnAt = time.Time{}
			s.current = m.start(s, "respawn after backoff")
		}
		w := s.current
		if w != nil && !w.readyAt.IsZero() && now.Sub(w.readyAt) > healthyAfter {
			s.crashes = 0
		}
	}
	for w := range m.live {
		if w.readyAt.IsZero() {
			continue
		}
		if w.draining {
			if now.After(w.killAt) {
				m.logf("m0serve: %s: still draining after %v: killing it", w, m.cfg.Server.GracefulTimeout+killGrace)
				syscall.Kill(w.pid, syscall.SIGKILL)
				w.killAt = now.Add(time.Hour)
			}
			continue
		}
		if m.cfg.WorkerTimeout > 0 {
			// Ready is sent as the loop starts, maybe before its first stamp.
			beat := time.Unix(0, max(w.heartbeat.Load(), w.readyAt.UnixNano()))
			if now.Sub(beat) > m.cfg.WorkerTimeout {
				m.logf("m0serve: %s: its loop has not turned for %v (--worker-timeout %v): killing it",
					w, now.Sub(beat).Round(time.Millisecond), m.cfg.WorkerTimeout)
				syscall.Kill(w.pid, syscall.SIGKILL)
				w.draining, w.heartbeatKilled = true, true // no second kill; its exit respawns the slot
				w.killAt = now.Add(time.Hour)
				continue
			}
		}
		if w.slot.current != w || w.slot.replacement != nil {
			continue
		}
		if m.cfg.MaxWorkerLifetime > 0 && now.Sub(w.readyAt) > m.cfg.MaxWorkerLifetime {
			m.retire(w, "--max-worker-lifetime "+m.cfg.MaxWorkerLifetime.String())
			continue
		}
		if sampleRSS {
			m.checkRSS(w)
		}
	}
}

// checkRSS recycles a worker over --max-worker-rss in two samples running:
// one is a spike.
func (m *master) checkRSS(w *worker) {
	rss, err := residentBytes(w.pid)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			m.logf("m0serve: %s: reading its memory: %v", w, err)
		}
		return
	}
	if rss <= m.cfg.MaxWorkerRSS<<20 {
		w.rssHigh = 0
		return
	}
	w.rssHigh++
	if w.rssHigh >= 2 {
		m.retire(w, fmt.Sprintf("resident memory %d MiB over --max-worker-rss %d", rss>>20, m.cfg.MaxWorkerRSS))
	}
}
