package supervisor

import (
	"syscall"
	"time"

	"github.com/m0serve/m0serve/internal/workerproto"
)

// signal answers the operator (README, the signals table).
func (m *master) signal(sig syscall.Signal) {
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT:
		if m.stopping && sig == syscall.SIGINT {
			m.logf("m0serve: warning: %v again: killing %s", sig, workers(len(m.live)))
			m.stop(syscall.SIGKILL)
			return
		}
		if m.stopping {
			return
		}
		m.logf("m0serve: %v: draining %s (up to %v)", sig, workers(len(m.live)), m.cfg.Server.GracefulTimeout())
		m.stop(syscall.SIGTERM)
	case syscall.SIGQUIT:
		m.logf("m0serve: warning: %v: killing %s", sig, workers(len(m.live)))
		m.stop(syscall.SIGKILL)
	case syscall.SIGHUP:
		if m.awaitingFix && !m.stopping {
			// A fix the watcher cannot see (a package installed).
			m.logf("m0serve: %v: booting again", sig)
			m.bootAgain()
			return
		}
		if m.stopping || !m.booted {
			m.logf("m0serve: warning: %v: ignored while %s", sig, map[bool]string{true: "stopping", false: "booting"}[m.stopping])
			return
		}
		if m.reload >= 0 {
			m.logf("m0serve: warning: %v: a reload is already under way (slot %d)", sig, m.reload)
			return
		}
		m.startReload(sig.String())
	case syscall.SIGTTIN:
		if m.stopping || len(m.slots) >= maxWorkers {
			return
		}
		if m.busFull() {
			m.logf("m0serve: warning: %v: ignored: --realtime's bus has a socket for each of the workers started with", sig)
			return
		}
		if m.removing() {
			// Its socket must leave the group first (steer's order).
			m.logf("m0serve: warning: %v: ignored while a worker is being removed; send it again", sig)
			return
		}
		port := m.port
		if err := m.addSlot(&port); err != nil {
			m.logf("m0serve: error: %v: adding a worker: %v", sig, err)
			return
		}
		s := m.slots[len(m.slots)-1]
		m.logf("m0serve: %v: one worker more (%d)", sig, len(m.activeSlots()))
		s.current = m.start(s, "SIGTTIN")
	case syscall.SIGTTOU:
		active := m.activeSlots()
		if m.stopping || len(active) <= 1 {
			m.logf("m0serve: warning: %v: ignored (%s)", sig, workers(len(active)))
			return
		}
		s := active[len(active)-1]
		s.removed = true
		m.logf("m0serve: %v: one worker fewer (%d)", sig, len(active)-1)
		if m.cfg.Listener == "reuseport" && s.current != nil {
			// New connections go to the other sockets; the worker takes
			// what is queued in its own before it drains (sweep).
			if err := m.rebalance(); err == nil {
				s.emptyBy = time.Now().Add(m.cfg.Server.GracefulTimeout())
				return
			} else {
				m.logf("m0serve: warning: %v: %v; connections queued for worker %d may be reset", sig, err, s.index)
			}
		}
		m.drainRemoved(s)
	case syscall.SIGUSR1:
		m.logf("m0serve: %v: reopening log files", sig)
		if err := m.cfg.Server.ReopenLogFiles(); err != nil {
			m.logf("m0serve: error: reopening log files: %v", err)
		}
		for w := range m.live {
			w.send(workerproto.Reopen)
		}
	}
}

// startReload starts a rolling reload, one slot at a time.
func (m *master) startReload(why string) {
	// New workers load the TLS certificate afresh: one that does not
	// load would fail them all, so the old workers keep serving instead.
	if err := m.cfg.Server.CheckTLS(); err != nil {
		m.logf("m0serve: %s: no reload: the workers keep the TLS certificate they have: %v", why, err)
		return
	}
	m.logf("m0serve: %s: rolling reload of %s, one slot at a time", why, workers(len(m.slots)))
	m.reload = -1
	m.advanceReload()
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
			m.logf("m0serve: error: reload aborted at worker %d", next)
			m.reload = -1
		}
		return
	}
	m.reload = -1
	m.logf("m0serve: reload complete")
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
