package supervisor

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// rebalance sends new connections (with reuseport) only to the sockets of
// slots whose worker accepts: not to a slot whose worker died and is not
// yet replaced (what is queued there waits for the replacement), stopped
// at its request limit, or is being removed. Nor, while another worker
// has room, to a busy one: every handler thread held by a request that
// has been in the app busyAfter or more (sweep), where a new connection
// would wait behind them although another worker is idle (a
// per-connection hash is blind to load). While every slot accepts and
// none is busy, the kernel's own hashing is left alone.
func (m *master) rebalance() error {
	if m.cfg.Listener != "reuseport" || !m.booted || m.stopping {
		return nil
	}
	var positions, slots, roomy, roomySlots, busySlots []int
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
			if w.busy {
				busySlots = append(busySlots, s.index)
			} else {
				roomy = append(roomy, position)
				roomySlots = append(roomySlots, s.index)
			}
		} else {
			everyone = false
		}
		position++
	}
	if len(positions) == 0 {
		return nil // nobody accepts: leave them queued
	}
	target, targetSlots := positions, slots
	if len(roomy) > 0 && len(busySlots) > 0 {
		target, targetSlots = roomy, roomySlots
	}
	key := fmt.Sprint(target)
	if everyone && len(target) == len(positions) && m.steered == "" || key == m.steered {
		return nil // nothing changed
	}
	if err := steer(fd, target); err != nil {
		return err
	}
	m.steered = key
	accepting := ""
	if !everyone {
		accepting = fmt.Sprint(slots)
	}
	if accepting != m.announced {
		m.announced = accepting
		m.logf("m0serve: new connections go to workers %s", strings.Trim(fmt.Sprint(slots), "[]"))
	}
	// Busy comes and goes with long requests: said at debug level only.
	aside := len(target) < len(positions)
	switch {
	case aside:
		m.logf("m0serve: debug: new connections go to workers %s (busy: %s)",
			strings.Trim(fmt.Sprint(targetSlots), "[]"), strings.Trim(fmt.Sprint(busySlots), "[]"))
	case m.busyAside:
		why := "none busy"
		if len(busySlots) > 0 {
			why = "every one busy"
		}
		m.logf("m0serve: debug: new connections go to workers %s (%s)", strings.Trim(fmt.Sprint(targetSlots), "[]"), why)
	}
	m.busyAside = aside
	return nil
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

// closeSlot closes a removed slot's socket once its workers are gone
// (with reuseport, after rebalance kept new connections away from it and
// its worker took what was queued).
func (m *master) closeSlot(s *slot) {
	if s.listenFD != m.shared && s.listenFD >= 0 {
		unix.Close(s.listenFD)
	}
	s.listenFD = -1
}

// stopListening makes the kernel refuse new connections while the master
// drains, as a single process does (server's stopper): an open listening
// socket goes on completing handshakes into its backlog, and those
// clients would wait for an answer that never comes, then be reset when
// the last process holding it exits. A socket stops listening once every
// live worker holding it has stopped accepting (workerproto.Stopping):
// shut down earlier, a worker's armed accept would fail before its loop
// knew it was shutting down. shutdown(SHUT_RD) ends the listening of the
// socket itself, in every process that holds it; the descriptors stay
// open until Run returns. An inherited socket (--fd, systemd's) outlives
// the master and is left listening.
func (m *master) stopListening() {
	if !m.stopping {
		return
	}
	accepting := map[int]bool{} // by listening socket
	for w := range m.live {
		if !w.stoppedAccepting {
			accepting[w.slot.listenFD] = true
		}
	}
	shut := map[int]bool{}
	for _, s := range m.slots {
		fd := s.listenFD
		if fd < 0 || s.shut || accepting[fd] || shut[fd] || fd == m.shared && m.sharedListener.Inherited {
			continue
		}
		shut[fd] = true
		// ENOTCONN: a BSD kernel, where a listening socket cannot be shut
		// down; it stays open until exit.
		if err := unix.Shutdown(fd, unix.SHUT_RD); err != nil && err != unix.ENOTCONN {
			m.logf("m0serve: closing the listening socket of worker %d: %v", s.index, err)
		}
	}
	for _, s := range m.slots {
		s.shut = s.shut || shut[s.listenFD]
	}
}
