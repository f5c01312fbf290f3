//go:build linux

package uring

import (
	"fmt"
	"unsafe"

	"github.com/pawelgaczynski/giouring"
	"golang.org/x/sys/unix"
)

// bufferGroup is the buffer group id the receive SQEs select from.
const bufferGroup = 0

// bufferRing is a provided buffer ring (IORING_REGISTER_PBUF_RING, 5.19):
// the kernel picks a buffer for each receive as data arrives, so an idle
// connection holds no buffer. Both the ring of descriptors and the buffers
// are mmap'd, off the Go heap, so the garbage collector never sees memory
// the kernel writes into.
type bufferRing struct {
	entries *giouring.BufAndRing // first descriptor; the tail lives in it
	ringMem []byte               // the descriptors, shared with the kernel
	mem     []byte               // count buffers of size bytes
	count   uint32
	size    uint32
	mask    int
	// delivered holds the ids of buffers handed to the loop in the last
	// batch; they go back to the kernel at the start of the next Wait,
	// which is how long Completion.Data of a provided buffer stays valid.
	delivered []uint16
}

func newBufferRing(ring *giouring.Ring, count, size uint32) (*bufferRing, error) {
	ringMem, err := unix.Mmap(-1, 0, int(count)*int(unsafe.Sizeof(giouring.BufAndRing{})),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("uring: mmap buffer ring of %d entries: %w", count, err)
	}
	mem, err := unix.Mmap(-1, 0, int(count)*int(size),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		_ = unix.Munmap(ringMem)
		return nil, fmt.Errorf("uring: mmap %d receive buffers of %d bytes: %w", count, size, err)
	}
	br := &bufferRing{
		entries:   (*giouring.BufAndRing)(unsafe.Pointer(&ringMem[0])),
		ringMem:   ringMem,
		mem:       mem,
		count:     count,
		size:      size,
		mask:      giouring.BufRingMask(count),
		delivered: make([]uint16, 0, count),
	}
	reg := giouring.BufReg{
		RingAddr:    uint64(uintptr(unsafe.Pointer(br.entries))),
		RingEntries: count,
		Bgid:        bufferGroup,
	}
	if _, err := ring.RegisterBufferRing(&reg, 0); err != nil {
		br.unmap()
		return nil, err
	}
	br.entries.BufRingInit()
	for id := range count {
		br.add(uint16(id), int(id))
	}
	br.entries.BufRingAdvance(int(count))
	return br, nil
}

func (br *bufferRing) add(id uint16, offset int) {
	addr := uintptr(unsafe.Pointer(&br.mem[int(id)*int(br.size)]))
	br.entries.BufRingAdd(addr, br.size, id, br.mask, offset)
}

// buffer is the first n bytes of buffer id.
func (br *bufferRing) buffer(id uint16, n int32) []byte {
	start := int(id) * int(br.size)
	return br.mem[start : start+int(n) : start+int(br.size)]
}

// recycle gives the kernel back every buffer delivered since the last call,
// with one tail store.
func (br *bufferRing) recycle() {
	if len(br.delivered) == 0 {
		return
	}
	for i, id := range br.delivered {
		br.add(id, i)
	}
	br.entries.BufRingAdvance(len(br.delivered))
	br.delivered = br.delivered[:0]
}

// unmap releases the memory. The ring must be gone or the group
// unregistered first, or the kernel could still pick a buffer.
func (br *bufferRing) unmap() {
	_ = unix.Munmap(br.mem)
	_ = unix.Munmap(br.ringMem)
}
