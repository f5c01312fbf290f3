package supervisor

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

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
// live worker holding it has stopped accepting (server.WorkerStopping):
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
