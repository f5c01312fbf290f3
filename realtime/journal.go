package realtime

// MaxReplayFrames is --replay-frames' ceiling (the Mojo m0serve's).
const MaxReplayFrames = 4096

// DefaultReplayFrames is --replay-frames' default.
const DefaultReplayFrames = 64

// Journal keeps a worker's last published frames, every channel's in one
// ring, so that a client reconnecting with Last-Event-ID is sent what it
// missed (Replay). Only numbered frames are kept. One goroutine's (the
// loop thread's).
type Journal struct {
	ring []journalEntry
	next int // where the next frame goes
	kept int
	// lost is the highest id no longer (or never) kept: the ring
	// overwrote it, or it was published before this worker started. A
	// client that asks for the frames after an id below it may have
	// missed one.
	lost int64
}

type journalEntry struct {
	id      int64
	channel []byte
	frame   []byte
}

// NewJournal keeps up to capacity frames; start is the counter's head
// when the worker began, below which it knows nothing.
func NewJournal(capacity int, start int64) *Journal {
	return &Journal{ring: make([]journalEntry, capacity), lost: start}
}

// Add keeps a copy of a numbered frame.
func (j *Journal) Add(id int64, channel, frame []byte) {
	if id <= 0 {
		return
	}
	if len(j.ring) == 0 {
		j.lost = max(j.lost, id)
		return
	}
	e := &j.ring[j.next]
	if j.kept == len(j.ring) {
		j.lost = max(j.lost, e.id)
	} else {
		j.kept++
	}
	e.id = id
	e.channel = append(e.channel[:0], channel...)
	e.frame = append(e.frame[:0], frame...)
	if cap(e.frame) > 4*len(e.frame) && cap(e.frame) > 4<<10 {
		e.frame = append([]byte(nil), frame...) // a big frame's buffer is not kept
	}
	j.next = (j.next + 1) % len(j.ring)
}

// Replay appends to dst what a client that has every frame up to after
// should be sent on channel: the kept frames after it, oldest first, or,
// when it may have missed one the journal no longer holds or asks for an
// id past head (the counter's last), the m0-gap event. after <= 0 is a
// fresh client: nothing.
func (j *Journal) Replay(dst []byte, channel string, after, head int64) []byte {
	if after <= 0 {
		return dst
	}
	if after > head || after < j.lost {
		return AppendGap(dst, after, head)
	}
	start := j.next - j.kept
	if start < 0 {
		start += len(j.ring)
	}
	for i := range j.kept {
		e := &j.ring[(start+i)%len(j.ring)]
		if e.id > after && string(e.channel) == channel {
			dst = append(dst, e.frame...)
		}
	}
	return dst
}
