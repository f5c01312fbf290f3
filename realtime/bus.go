package realtime

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The variables a process of the server finds its part of the bus in, and
// the ones m0pub.py reads (the Mojo m0serve's names).
const (
	// WriteFDsEnv: the write ends, one per worker, comma-separated.
	WriteFDsEnv = "M0_BUS_WRITE_FDS"
	// WriteIDsEnv: each write end's st_dev:st_ino, in the same order, so
	// a child handed no descriptors finds that the numbers are not the
	// bus's (m0pub.py's bus_write_fds).
	WriteIDsEnv = "M0_BUS_WRITE_IDS"
	// PageFDEnv: the counter's page.
	PageFDEnv = "M0_SHARED_ID_FD"
	// ReadFDEnv: this worker's read end (the server's own; m0pub.py does
	// not read it).
	ReadFDEnv = "M0_BUS_READ_FD"
)

// sendBuffer is what each write end may hold unread: a burst of
// publishes while a worker's loop is busy.
const sendBuffer = 4 << 20

// Bus is every descriptor of the realtime bus: one datagram socket pair
// per worker (its read end and the write end every process shares) and
// the counter's page. The master makes it before starting the workers;
// a single process makes its own, with one pair.
type Bus struct {
	Reads  []int
	Writes []int
	Page   int
	ids    []string
}

// NewBus makes a bus for workers workers. Every descriptor is
// close-on-exec: a worker gets its own through its start's file list.
func NewBus(workers int) (*Bus, error) {
	page, err := NewPage()
	if err != nil {
		return nil, err
	}
	b := &Bus{Page: page}
	for range workers {
		// SOCK_CLOEXEC is Linux's (and the BSDs'), not macOS's: marked
		// after, before any worker starts (the master makes the bus first).
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("realtime: the bus's socket pair: %w", err)
		}
		unix.CloseOnExec(pair[0])
		unix.CloseOnExec(pair[1])
		b.Reads = append(b.Reads, pair[0])
		b.Writes = append(b.Writes, pair[1])
		// Publishing never waits: a full worker's frame is dropped (and
		// publish counts it as not reached), as the Mojo m0serve does.
		unix.SetNonblock(pair[1], true)
		unix.SetsockoptInt(pair[1], unix.SOL_SOCKET, unix.SO_SNDBUF, sendBuffer)
		unix.SetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_RCVBUF, sendBuffer)
		var st unix.Stat_t
		if err := unix.Fstat(pair[1], &st); err != nil {
			b.Close()
			return nil, fmt.Errorf("realtime: the bus's socket pair: %w", err)
		}
		b.ids = append(b.ids, strconv.FormatUint(uint64(st.Dev), 10)+":"+strconv.FormatUint(st.Ino, 10))
	}
	return b, nil
}

// Close closes every descriptor of the bus.
func (b *Bus) Close() {
	for _, fd := range append(append([]int{b.Page}, b.Reads...), b.Writes...) {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// Env is the variables of a process that holds the bus's descriptors at
// these numbers: read (its own read end, -1 for none), page, writes.
func (b *Bus) Env(read, page int, writes []int) []string {
	nums := make([]string, len(writes))
	for i, fd := range writes {
		nums[i] = strconv.Itoa(fd)
	}
	env := []string{
		WriteFDsEnv + "=" + strings.Join(nums, ","),
		WriteIDsEnv + "=" + strings.Join(b.ids, ","),
		PageFDEnv + "=" + strconv.Itoa(page),
	}
	if read >= 0 {
		env = append(env, ReadFDEnv+"="+strconv.Itoa(read))
	}
	return env
}

// Worker is one process's part of the bus, found from its variables.
type Worker struct {
	Read    int
	Writes  []int
	Counter *Counter
}

// WorkerFromEnv finds this process's part of the bus; ok is false when
// the variables are not set (no --realtime). The descriptors are made
// close-on-exec: a child the app starts gets them only when handed them
// (m0pub.child_fds()).
func WorkerFromEnv() (w *Worker, ok bool, err error) {
	read, okRead := os.LookupEnv(ReadFDEnv)
	page, okPage := os.LookupEnv(PageFDEnv)
	if !okRead || !okPage {
		return nil, false, nil
	}
	w = &Worker{}
	if w.Read, err = strconv.Atoi(read); err != nil {
		return nil, true, fmt.Errorf("realtime: %s=%q: %w", ReadFDEnv, read, err)
	}
	pageFD, err := strconv.Atoi(page)
	if err != nil {
		return nil, true, fmt.Errorf("realtime: %s=%q: %w", PageFDEnv, page, err)
	}
	for _, part := range strings.Split(os.Getenv(WriteFDsEnv), ",") {
		if fd, err := strconv.Atoi(part); err == nil {
			w.Writes = append(w.Writes, fd)
			unix.CloseOnExec(fd)
		}
	}
	unix.CloseOnExec(w.Read)
	unix.CloseOnExec(pageFD)
	if w.Counter, err = MapCounter(pageFD); err != nil {
		return nil, true, err
	}
	return w, true, nil
}

// Publish sends one frame to channel on every worker, numbered id, and
// returns how many workers it reached: the Go side of m0pub.publish_frame
// (--pg-listen's).
func (w *Worker) Publish(id int64, channel string, frame []byte) int {
	if len(frame) > MaxFrame || len(channel) > 0xffff || Reserved([]byte(channel)) {
		return 0
	}
	datagram := AppendDatagram(nil, id, channel, frame)
	reached := 0
	for _, fd := range w.Writes {
		if err := unix.Send(fd, datagram, 0); err == nil {
			reached++
		}
	}
	return reached
}
