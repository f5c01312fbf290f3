//go:build linux

package uring

// kind says what an SQE was for; it is the top byte of user_data.
type kind uint8

const (
	kindAccept kind = iota + 1
	kindRecv
	kindSend
	kindClose
	kindCancel
	kindWake
	// A file send (QueueSendFile): file to pipe, pipe to socket, and a
	// wait for room in the socket when it was full.
	kindSpliceIn
	kindSpliceOut
	kindPollOut
)

const (
	kindShift = 56
	slotShift = 32
	// MaxSlot is the largest slot user_data can carry (24 bits).
	MaxSlot = 1<<(kindShift-slotShift) - 1
)

func userData(k kind, slot, gen uint32) uint64 {
	return uint64(k)<<kindShift | uint64(slot&MaxSlot)<<slotShift | uint64(gen)
}

func splitUserData(data uint64) (k kind, slot, gen uint32) {
	return kind(data >> kindShift), uint32(data>>slotShift) & MaxSlot, uint32(data)
}
