package server

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/m0serve/m0serve/internal/workerproto"
	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// handoff is a worker's side of passing connections between siblings
// (package workerproto says why and how): its loop passes on what it
// accepts while every handler thread is taken, to a sibling the board
// shows with one free, and adopts what its siblings pass to it.
type handoff struct {
	slot  int
	slots int // siblings' inboxes given, slot j at HandoffOutboxFD(j)
	board []byte
	entry *workerproto.BoardEntry // this slot's
	// capacity is what the app serves at once (0: not bounded: never
	// full, so never passes on).
	capacity int
	next     atomic.Int32 // where the next search starts: passes go round
	pid      int32
	loop     *loop.Loop // set by join, before the loop accepts
	parked   parked     // handoff_park.go
	// left: the worker stops accepting (leave). Its inbox is its
	// replacement's from then on: it reads no more of it.
	left atomic.Bool
}

// handoffFromEnv maps the board if the master handed one over; nil when
// it did not (a single process, or the handoff off).
func handoffFromEnv(slot int) (*handoff, error) {
	text, ok := os.LookupEnv(workerproto.HandoffEnv)
	if !ok {
		return nil, nil
	}
	os.Unsetenv(workerproto.HandoffEnv)
	slots, err := strconv.Atoi(text)
	if err != nil || slots < 0 {
		return nil, fmt.Errorf("%s=%q: not a number of slots", workerproto.HandoffEnv, text)
	}
	unix.CloseOnExec(workerproto.HandoffBoardFD)
	unix.CloseOnExec(workerproto.HandoffInboxFD)
	for j := 0; j < slots; j++ {
		unix.CloseOnExec(workerproto.HandoffOutboxFD(j))
	}
	mem, err := unix.Mmap(workerproto.HandoffBoardFD, 0, workerproto.BoardSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("worker %d: mapping the handoff board: %w", slot, err)
	}
	entry := workerproto.Board(mem, slot)
	if entry == nil {
		return nil, nil
	}
	return &handoff{slot: slot, slots: slots, board: mem, entry: entry, pid: int32(os.Getpid())}, nil
}

// join puts the worker on the board once its loop runs: siblings may pass
// it connections from now on, and it adopts them into l.
func (h *handoff) join(l *loop.Loop, capacity int) {
	if h == nil {
		return
	}
	h.capacity = capacity
	h.entry.Capacity.Store(int32(capacity))
	h.entry.Owner.Store(h.pid)
	h.entry.Taking.Store(1)
	h.loop = l
	go h.receive(l)
}

// leave takes the worker off the board as it stops accepting (a drain, a
// stop): nothing more is passed to it. A replacement may already own
// the entry.
func (h *handoff) leave() {
	if h == nil {
		return
	}
	h.left.Store(true)
	if h.entry.Owner.Load() == h.pid {
		h.entry.Taking.Store(0)
	}
}

// passOn is the loop's Config.PassOn: with every handler thread taken,
// the connection goes to the first sibling with one free, round the
// board from where the last pass went; with none, it is parked until one
// is, here or there (handoff_park.go).
func (h *handoff) passOn(fd int, jobsOut int) bool {
	if h.capacity == 0 || jobsOut < h.capacity {
		return false
	}
	if !h.passToFree(fd) {
		h.park(fd)
	}
	return true
}

// passToFree passes fd to a sibling with a handler free, if one is.
// From the loop thread, or from the rescue while the loop is in the app.
func (h *handoff) passToFree(fd int) bool {
	for i := 0; i < h.slots; i++ {
		j := (int(h.next.Load()) + i) % h.slots
		if j == h.slot {
			continue
		}
		e := workerproto.Board(h.board, j)
		if e == nil || !e.Free() {
			continue
		}
		err := unix.Sendmsg(workerproto.HandoffOutboxFD(j), []byte{0}, unix.UnixRights(fd), nil, unix.MSG_DONTWAIT)
		if err != nil {
			continue
		}
		unix.Close(fd)
		h.next.Store(int32(j + 1))
		return true
	}
	return false
}

// inApp is the board's count of this worker's requests inside the app,
// which the bridge and the inline handler keep (nil: no board).
func (h *handoff) inApp() *atomic.Int32 {
	if h == nil {
		return nil
	}
	return &h.entry.InApp
}

// passOnHook is the loop's PassOn, nil without a board or with an app
// that is never full.
func (h *handoff) passOnHook(capacity int) func(int, int) bool {
	if h == nil || capacity == 0 || h.slots < 2 {
		return nil
	}
	return h.passOn
}

// receive adopts the connections siblings pass, until the worker leaves
// the board: a replacement reads the same inbox, and what a draining
// worker took from it would end with it. It waits in poll(2), a tenth of
// a second at a time, to see the leave.
func (h *handoff) receive(l *loop.Loop) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	wait := []unix.PollFd{{Fd: workerproto.HandoffInboxFD, Events: unix.POLLIN}}
	for !h.left.Load() {
		if n, err := unix.Poll(wait, 100); n <= 0 || err != nil || h.left.Load() {
			continue
		}
		_, oobn, _, _, err := unix.Recvmsg(workerproto.HandoffInboxFD, buf, oob, recvCloexec|unix.MSG_DONTWAIT)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue // EAGAIN: the replacement took it
		}
		if err != nil {
			return
		}
		messages, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			continue
		}
		for i := range messages {
			fds, err := unix.ParseUnixRights(&messages[i])
			if err != nil {
				continue
			}
			for _, fd := range fds {
				unix.CloseOnExec(fd) // done already where recvCloexec is set
				l.Adopt(fd)
			}
		}
	}
}
