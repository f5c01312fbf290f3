package workerproto

import (
	"sync/atomic"
	"unsafe"
)

// The handoff: a worker that accepts a connection while every one of its
// handler threads is taken passes the connection to a sibling with one
// free, rather than keep it queued behind its own requests. With one
// SO_REUSEPORT socket per worker the kernel picks the worker by a hash of
// the connection, blind to load, and a view that calls its own server
// would otherwise wait on itself whenever its request hashes back to the
// worker running it. Deciding at accept time, on counts the workers keep
// exact, makes that so by construction, where the master's steering
// (which follows the heartbeats) lags.
//
// The master makes, before its first worker, the board (a shared file of
// BoardSlots entries, one per slot) and one datagram socketpair per slot:
// the slot's inbox. A worker gets the board as descriptor HandoffBoardFD,
// its own inbox's receiving end as HandoffInboxFD, and the sending end of
// every slot's inbox as HandoffOutboxFD(slot), for the slots HandoffEnv
// counts (a slot added later is reached by workers started after it). A
// connection passed on is one datagram of one byte with the socket in
// SCM_RIGHTS. The master keeps the inboxes, so what waits in a slot's
// inbox when its worker dies goes to the replacement.
const (
	// HandoffEnv holds how many slots' inboxes the worker was given; its
	// absence turns the handoff off.
	HandoffEnv = "M0_WORKER_HANDOFF"

	HandoffBoardFD = 6
	HandoffInboxFD = 7

	// BoardSlots bounds the slots that take part: a slot past it neither
	// passes nor takes connections.
	BoardSlots = 256
	// boardEntrySize keeps each entry on a cache line of its own: each is
	// written by its worker's loop thread per request.
	boardEntrySize = 64
	BoardSize      = BoardSlots * boardEntrySize
)

// HandoffOutboxFD is the descriptor a worker sends slot's connections on.
func HandoffOutboxFD(slot int) int { return HandoffInboxFD + 1 + slot }

// BoardEntry is one slot's line of the board. Its worker writes it; its
// siblings and the master read it, and the master clears Taking when the
// worker ends.
type BoardEntry struct {
	// Taking: the slot's worker is ready and not draining: a sibling may
	// pass it connections.
	Taking atomic.Uint32
	// Capacity is how many requests its app serves at once (WSGI's
	// handler threads; 0: not bounded, never full).
	Capacity atomic.Int32
	// InApp is how many of its requests are inside the app: taken by a
	// handler thread (from the take to the response's end, before the
	// loop has sent it), or run by the I/O thread itself. A thread that
	// has handed its response to the loop is free at once.
	InApp atomic.Int32
	// Owner is the pid of the worker that wrote Taking last: during a
	// reload two workers share a slot, and the master clears Taking at a
	// worker's end only if it was that worker's.
	Owner atomic.Int32
}

var _ [boardEntrySize - int(unsafe.Sizeof(BoardEntry{}))]struct{}

// Board is slot's entry of a mapped board, nil past BoardSlots.
func Board(mem []byte, slot int) *BoardEntry {
	if slot < 0 || slot >= BoardSlots || len(mem) < BoardSize {
		return nil
	}
	return (*BoardEntry)(unsafe.Pointer(&mem[slot*boardEntrySize]))
}

// Free reports whether the entry's worker takes connections and has a
// handler free.
func (e *BoardEntry) Free() bool {
	if e.Taking.Load() == 0 {
		return false
	}
	c := e.Capacity.Load()
	return c == 0 || e.InApp.Load() < c
}
