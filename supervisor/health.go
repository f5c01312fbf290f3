package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/internal/workerproto"
)

// sweep runs every sweepEvery: respawns that are due, heartbeats,
// lifetimes, drains past their grace, memory.
func (m *master) sweep(now time.Time) {
	if m.stopping {
		if now.After(m.stopBy) && len(m.live) > 0 {
			m.logf("m0serve: warning: %s still running after %v: killing them", workers(len(m.live)), m.cfg.Server.GracefulTimeout()+killGrace)
			m.stopBy = now.Add(time.Hour)
			for w := range m.live {
				w.proc.signal(syscall.SIGKILL)
			}
		}
		return
	}
	sampleRSS := m.cfg.MaxWorkerRSS > 0 && !now.Before(m.nextRSS)
	if sampleRSS {
		m.nextRSS = now.Add(m.cfg.RSSCheckInterval)
	}
	held := now.Add(-busyAfter)
	for _, s := range m.slots {
		if w := s.current; w != nil && !w.exited {
			w.busy = w.capacity > 0 && !w.readyAt.IsZero() && workerproto.InAppBefore(w.heartMem, held) >= w.capacity
		}
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
				m.logf("m0serve: warning: %s: still draining after %v: killing it", w, m.cfg.Server.GracefulTimeout()+killGrace)
				w.proc.signal(syscall.SIGKILL)
				w.killAt = now.Add(time.Hour)
			}
			continue
		}
		if m.cfg.WorkerTimeout > 0 {
			// Ready is sent as the loop starts, maybe before its first stamp.
			beat := time.Unix(0, max(w.heartbeat.Load(), w.readyAt.UnixNano()))
			if now.Sub(beat) > m.cfg.WorkerTimeout {
				m.logf("m0serve: critical: %s: its loop has not turned for %v (--worker-timeout %v): killing it",
					w, now.Sub(beat).Round(time.Millisecond), m.cfg.WorkerTimeout)
				w.proc.signal(syscall.SIGKILL)
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
			m.logf("m0serve: warning: %s: reading its memory: %v", w, err)
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

// inFlightNote names the requests that were inside the app of a worker
// that has exited, from its heartbeat file: what a crash (os._exit, a
// segfault) or a kill cut off. Empty when none was.
func inFlightNote(w *worker, now time.Time) string {
	requests := workerproto.InFlightRequests(w.heartMem)
	if len(requests) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; in flight: ")
	for i, r := range requests {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(requests)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q for %v", r.Line, now.Sub(r.Started).Round(time.Millisecond))
	}
	return b.String()
}
