package realtime

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The counter's page, as the Mojo m0serve lays it out: the last event id
// taken at offset 0 (an int64 every process adds to atomically), and at
// PageMagicOffset a magic word m0pub.py checks before it numbers from a
// page it was handed, so a descriptor number inherited without its file
// is never written through.
const (
	PageSize        = 4096
	PageMagicOffset = 16
	PageMagic       = 0x6D30706167650001 // "m0page" and a version byte
)

// Counter is the event-id counter on a page shared by every process of
// the server. Safe for concurrent use.
type Counter struct {
	mem  []byte
	word *int64
}

// NewPage makes the counter's page (an unlinked file, so that a child
// process maps it by descriptor) and returns its descriptor,
// close-on-exec.
func NewPage() (int, error) {
	f, err := os.CreateTemp("", "m0serve-ids-")
	if err != nil {
		return -1, fmt.Errorf("realtime: the event-id page: %w", err)
	}
	os.Remove(f.Name())
	defer f.Close()
	var page [PageSize]byte
	binary.LittleEndian.PutUint64(page[PageMagicOffset:], PageMagic)
	if _, err := f.WriteAt(page[:], 0); err != nil {
		return -1, fmt.Errorf("realtime: the event-id page: %w", err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return -1, fmt.Errorf("realtime: the event-id page: %w", err)
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// MapCounter maps the page behind fd; it refuses a file without the magic
// word.
func MapCounter(fd int) (*Counter, error) {
	mem, err := unix.Mmap(fd, 0, PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("realtime: mapping the event-id page (descriptor %d): %w", fd, err)
	}
	if binary.LittleEndian.Uint64(mem[PageMagicOffset:]) != PageMagic {
		unix.Munmap(mem)
		return nil, fmt.Errorf("realtime: descriptor %d is not the event-id page", fd)
	}
	return &Counter{mem: mem, word: (*int64)(unsafe.Pointer(&mem[0]))}, nil
}

// Next takes the next event id: the first is 1.
func (c *Counter) Next() int64 { return atomic.AddInt64(c.word, 1) }

// Head is the last id taken, 0 before the first.
func (c *Counter) Head() int64 { return atomic.LoadInt64(c.word) }

// Word is the counter's int64 in this process's mapping, for the
// interpreter's m0pub, which adds to it from C.
func (c *Counter) Word() *int64 { return c.word }
