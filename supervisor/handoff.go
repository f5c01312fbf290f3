package supervisor

import (
	"strconv"

	"github.com/m0serve/m0serve/internal/workerproto"
	"golang.org/x/sys/unix"
)

// The master's side of the handoff (package workerproto has the
// protocol): it makes the board and each slot's inbox, hands them to
// every worker it starts, and clears a worker's entry when it ends, so
// that nothing is passed to a worker that is gone.

// openHandoff makes the slot's inbox, and the board with the first slot.
// A failure turns the handoff off (the workers serve without it): it is
// worth a warning, not a refusal to start.
func (m *master) openHandoff(s *slot) {
	s.inbox, s.outbox = -1, -1
	if m.handoffOff || s.index >= workerproto.BoardSlots {
		return
	}
	if m.board == nil {
		file, err := heartbeatFile()
		if err == nil {
			err = file.Truncate(workerproto.BoardSize)
		}
		var mem []byte
		if err == nil {
			mem, err = unix.Mmap(int(file.Fd()), 0, workerproto.BoardSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		}
		if err != nil {
			if file != nil {
				file.Close()
			}
			m.handoffOff = true
			m.logf("m0serve: warning: the workers' handoff board: %v: a worker whose handler threads are all taken keeps its new connections", err)
			return
		}
		m.board, m.boardFile = mem, file
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err != nil {
		m.logf("m0serve: warning: worker %d's handoff inbox: %v", s.index, err)
		return
	}
	unix.CloseOnExec(pair[0])
	unix.CloseOnExec(pair[1])
	// Senders never wait: a full inbox means the connection stays where
	// it was accepted. O_NONBLOCK belongs to the open file, which every
	// worker shares.
	unix.SetNonblock(pair[1], true)
	s.inbox, s.outbox = pair[0], pair[1]
}

// handoffFiles are the descriptors and variable a worker of slot s gets
// (none when the handoff is off).
func (m *master) handoffFiles(s *slot) (files []uintptr, env []string) {
	if m.board == nil || s.inbox < 0 {
		return nil, nil
	}
	files = []uintptr{m.boardFile.Fd(), uintptr(s.inbox)}
	for _, other := range m.slots { // in slot order: slot j at HandoffOutboxFD(j)
		fd := other.outbox
		if fd < 0 {
			// A slot without an inbox takes no part: its entry never
			// says Taking, so nothing is sent on this placeholder.
			fd = int(m.boardFile.Fd())
		}
		files = append(files, uintptr(fd))
	}
	return files, []string{workerproto.HandoffEnv + "=" + strconv.Itoa(len(m.slots))}
}

// handoffEnded takes w's slot off the board if w was the one on it.
func (m *master) handoffEnded(w *worker) {
	if e := workerproto.Board(m.board, w.slot.index); e != nil {
		e.Owner.CompareAndSwap(int32(w.pid), 0)
		if e.Owner.Load() == 0 {
			e.Taking.Store(0)
		}
	}
}

func (m *master) closeHandoff() {
	for _, s := range m.slots {
		for _, fd := range []int{s.inbox, s.outbox} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		s.inbox, s.outbox = -1, -1
	}
	if m.board != nil {
		unix.Munmap(m.board)
		m.boardFile.Close()
		m.board, m.boardFile = nil, nil
	}
}
