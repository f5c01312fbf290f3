//go:build linux

package uring

import "fmt"

// slotState is what the backend must remember about one generation of a
// slot while the kernel holds operations for it.
type slotState struct {
	gen      uint32
	inUse    bool
	recvBuf  []byte // the slot buffer a single-shot recv writes into
	sendData []byte // the data of the send in flight
	sendDone int    // bytes of sendData already written
	fd       int32
	// pending counts operations the kernel still holds for the slot: an
	// armed receive and a send in flight.
	pending uint8
	// multishotArmed says a multishot receive is armed: QueueRecv again
	// would only duplicate it.
	multishotArmed bool
	// file is the file send in flight (QueueSendFile), counted in
	// pending as one operation.
	file     fileSend
	closing  bool // QueueClose was called; OpClose not yet delivered
	closed   bool // the close SQE completed
	closeRes int32
}

// busy says the kernel may still complete something for this generation.
func (s *slotState) busy() bool { return s.pending > 0 || s.closing }

// state returns the state of slot's generation gen, making it if there is
// none: in a lane of another generation that is no longer busy, else in a
// new lane (an allocation only the first time a slot needs one more).
func (b *Backend) state(slot, gen uint32) *slotState {
	if slot > MaxSlot {
		panic(fmt.Sprintf("uring: slot %d beyond the %d user_data can carry", slot, MaxSlot))
	}
	for uint32(len(b.slots)) <= slot {
		b.slots = append(b.slots, nil)
	}
	if s := b.find(slot, gen); s != nil {
		return s
	}
	lanes := b.slots[slot]
	for i := range lanes {
		if !lanes[i].busy() {
			lanes[i] = slotState{gen: gen, inUse: true}
			return &lanes[i]
		}
	}
	b.slots[slot] = append(lanes, slotState{gen: gen, inUse: true})
	return &b.slots[slot][len(lanes)]
}

// find returns the state of slot's generation gen, or nil.
func (b *Backend) find(slot, gen uint32) *slotState {
	if slot >= uint32(len(b.slots)) {
		return nil
	}
	lanes := b.slots[slot]
	for i := range lanes {
		if lanes[i].inUse && lanes[i].gen == gen {
			return &lanes[i]
		}
	}
	return nil
}
