package loop

import "sync/atomic"

// ring is a bounded multi-producer multi-consumer queue (Dmitry Vyukov's
// design): each cell carries a sequence number that says whether it is
// free for the producer at that position or full for the consumer, so a
// push or pop is one compare-and-swap on a shared index and no lock. The
// loop and the handler threads meet through these rings: the JobQueue's,
// and the loop's notes (noteQueue), which overflow rather than refuse.
type ring[T any] struct {
	cells []ringCell[T]
	mask  uint64
	_     [56]byte // keep the producer index off the consumer's cache line
	head  atomic.Uint64
	_     [56]byte
	tail  atomic.Uint64
	_     [56]byte
}

type ringCell[T any] struct {
	seq   atomic.Uint64
	value T
}

// init sizes the ring to the next power of two at or above capacity.
func (r *ring[T]) init(capacity int) {
	size := 2
	for size < capacity {
		size <<= 1
	}
	r.cells = make([]ringCell[T], size)
	r.mask = uint64(size - 1)
	for i := range r.cells {
		r.cells[i].seq.Store(uint64(i))
	}
}

// push appends v, or reports false when the ring is full.
func (r *ring[T]) push(v T) bool {
	pos := r.tail.Load()
	for {
		cell := &r.cells[pos&r.mask]
		seq := cell.seq.Load()
		switch diff := int64(seq) - int64(pos); {
		case diff == 0:
			if r.tail.CompareAndSwap(pos, pos+1) {
				cell.value = v
				cell.seq.Store(pos + 1)
				return true
			}
			pos = r.tail.Load()
		case diff < 0:
			return false
		default:
			pos = r.tail.Load()
		}
	}
}

// pop removes the oldest value, or reports false when the ring is empty.
func (r *ring[T]) pop() (T, bool) {
	var zero T
	pos := r.head.Load()
	for {
		cell := &r.cells[pos&r.mask]
		seq := cell.seq.Load()
		switch diff := int64(seq) - int64(pos+1); {
		case diff == 0:
			if r.head.CompareAndSwap(pos, pos+1) {
				v := cell.value
				cell.value = zero
				cell.seq.Store(pos + r.mask + 1)
				return v, true
			}
			pos = r.head.Load()
		case diff < 0:
			return zero, false
		default:
			pos = r.head.Load()
		}
	}
}

// empty reports whether the ring held nothing at the moment of the call.
func (r *ring[T]) empty() bool { return r.head.Load() == r.tail.Load() }
