//go:build linux

package uring

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/readiness"
	"golang.org/x/sys/unix"
)

// wakeValue is what Wake writes: an eventfd adds 8-byte counters in the
// host's byte order.
var wakeValue = binary.NativeEndian.AppendUint64(nil, 1)

// startWake creates the eventfd and arms a read on it.
func (b *Backend) startWake() error {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("uring: eventfd for wake: %w", err)
	}
	b.wakeFD = fd
	b.armWake()
	return nil
}

// armWake queues a read of the eventfd counter. One read is armed at a
// time: reading resets the counter, which is what coalesces many Wakes into
// one OpWake.
func (b *Backend) armWake() {
	entry := b.sqe()
	if entry == nil {
		return
	}
	entry.PrepareRead(b.wakeFD, uintptr(unsafe.Pointer(&b.wakeBuf[0])), uint32(len(b.wakeBuf)), 0)
	entry.UserData = userData(kindWake, 0, 0)
}

// Wake makes the loop's Wait return with OpWake. Safe from any thread: it
// is one write(2) on the eventfd.
func (b *Backend) Wake() error {
	if err := readiness.SignalWake(b.wakeFD, wakeValue); err != nil {
		return fmt.Errorf("uring: wake eventfd write: %w", err)
	}
	return nil
}

func (b *Backend) completeWake(res int32, out []loop.Completion, n int) int {
	if res == -int32(unix.ECANCELED) {
		return n
	}
	b.armWake()
	return b.emit(loop.Completion{Op: loop.OpWake}, -1, out, n)
}
