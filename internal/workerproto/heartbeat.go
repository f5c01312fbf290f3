package workerproto

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/m0serve/m0serve/internal/counters"
)

// The heartbeat file a worker shares with its master: the loop's stamp,
// the loop's counters for the master's metrics, then a table of the
// requests inside the app, so that the master can say which request a
// worker was serving when it died (os._exit, a segfault, a kill) and how
// long it had been there.
//
//	[0, 8)        the loop's last stamp, unix nanoseconds (Stamp)
//	[8, 256)      the loop's counters: counters.Words, WordCount int64
//	              words in that package's order (LoopWords)
//	[256, 264)    AppStats (AppStatsIn)
//	[504, 512)    the layout: LayoutMagic, then LayoutVersion (uint32 each)
//	[512, 4096)   inFlightRecords records of inFlightRecordSize bytes:
//	              state uint32, line length uint32, start unix ns int64,
//	              the request line's method and target (cut)
//
// The master maps the file before the worker exists and reads it with its
// own idea of the layout. After the binary is replaced on disk, a reload
// (SIGHUP) starts workers of the new binary under the old master: the
// worker writes its layout at [504, 512) as it maps the file, and the
// master checks it (CheckLayout) before it takes anything else the worker
// says, so a worker of another layout is refused, not misread. That word
// keeps its place in every layout; change anything else and raise
// LayoutVersion.
//
// A record is claimed with a compare-and-swap on its state, filled, then
// published; freeing it is one store. Writers are the handler threads (or
// the ASGI executor, or the loop thread with --threads 0) and allocate
// nothing; the master reads the table once the worker has exited (a
// record a crash left half filled reads as not there).
const (
	HeartbeatSize = 4096

	// LayoutMagic marks a heartbeat file a worker has written its layout
	// into ("m0hb" read as a little-endian uint32).
	LayoutMagic uint32 = 0x6268306d
	// LayoutVersion is this binary's layout of the heartbeat file.
	LayoutVersion uint32 = 2

	statsOffset        = 8
	appStatsOffset     = 256
	layoutOffset       = 504
	inFlightOffset     = 512
	inFlightRecordSize = 128
	inFlightRecords    = (HeartbeatSize - inFlightOffset) / inFlightRecordSize
	inFlightLineMax    = inFlightRecordSize - 16
)

// Each part must end before the next starts.
var (
	_ [appStatsOffset - statsOffset - 8*counters.WordCount]struct{}
	_ [layoutOffset - appStatsOffset - int(unsafe.Sizeof(AppStats{}))]struct{}
	_ [inFlightOffset - layoutOffset - 8]struct{}
)

// Stamp is the loop's last stamp in a mapped heartbeat file.
func Stamp(mem []byte) *atomic.Int64 { return (*atomic.Int64)(unsafe.Pointer(&mem[0])) }

// LoopWords are the loop's counters in a mapped heartbeat file.
func LoopWords(mem []byte) *counters.Words {
	return (*counters.Words)(unsafe.Pointer(&mem[statsOffset]))
}

// AppStatsIn is the AppStats in a mapped heartbeat file.
func AppStatsIn(mem []byte) *AppStats { return (*AppStats)(unsafe.Pointer(&mem[appStatsOffset])) }

// WriteLayout marks a mapped heartbeat file as of this binary's layout:
// the worker's first write to it.
func WriteLayout(mem []byte) {
	binary.LittleEndian.PutUint32(mem[layoutOffset:], LayoutMagic)
	(*atomic.Uint32)(unsafe.Pointer(&mem[layoutOffset+4])).Store(LayoutVersion)
}

// LayoutError is a worker whose heartbeat file is not of the master's
// layout: another binary than the master's.
type LayoutError struct {
	Version uint32 // the worker's; 0: it wrote none (a binary from before versions)
}

func (e *LayoutError) Error() string {
	if e.Version == 0 {
		return fmt.Sprintf("its heartbeat file has no layout version (a binary older than this master's, which reads layout %d): restart the master to run the new binary", LayoutVersion)
	}
	return fmt.Sprintf("its heartbeat file has layout %d, this master reads layout %d (the binary was replaced): restart the master to run the new binary", e.Version, LayoutVersion)
}

// CheckLayout is the master's check of a worker's heartbeat file, once
// the worker has said something on its control socket (it writes its
// layout before it can): nil when it is this binary's layout.
func CheckLayout(mem []byte) error {
	if len(mem) < HeartbeatSize {
		return &LayoutError{}
	}
	version := (*atomic.Uint32)(unsafe.Pointer(&mem[layoutOffset+4])).Load()
	if binary.LittleEndian.Uint32(mem[layoutOffset:]) != LayoutMagic {
		version = 0
	}
	if version != LayoutVersion {
		return &LayoutError{Version: version}
	}
	return nil
}

// AppStats are the counters the handler threads keep for the metrics
// (the loop's own are LoopWords). In a worker they live in the heartbeat
// file, beside the loop's, for the master to read.
type AppStats struct {
	// Busy is the nanoseconds requests spent with the app: from a
	// handler thread (or the ASGI executor, or the loop thread with
	// --threads 0) taking one to its response's end.
	Busy atomic.Int64
}

// Served adds the time since taken (a handler's clock reading; zero: no
// start known) and returns now (zero when the metrics are off: s nil).
func (s *AppStats) Served(taken time.Time) time.Time {
	if s == nil {
		return time.Time{}
	}
	now := time.Now()
	if !taken.IsZero() {
		s.Busy.Add(int64(now.Sub(taken)))
	}
	return now
}

// Start is the clock reading Served takes: one vDSO call when the
// metrics are on, none when they are off.
func (s *AppStats) Start() time.Time {
	if s == nil {
		return time.Time{}
	}
	return time.Now()
}

// Record states.
const (
	recordFree uint32 = iota
	recordFilling
	recordInUse
)

// InFlight is a worker's table of requests inside the app, in its
// heartbeat file; nil in a single process, where nobody reads it.
type InFlight struct {
	mem []byte // the whole heartbeat mapping
}

// NewInFlight is the table in a mapped heartbeat file.
func NewInFlight(mem []byte) *InFlight { return &InFlight{mem: mem} }

func (t *InFlight) state(i int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&t.mem[inFlightOffset+i*inFlightRecordSize]))
}

// Claim records method and target as in the app from now, and returns
// the record to release, or -1 when the table is full (more requests in
// flight than it holds: an ASGI worker's; those go unnamed).
func (t *InFlight) Claim(method, target []byte) int {
	if t == nil {
		return -1
	}
	for i := 0; i < inFlightRecords; i++ {
		state := t.state(i)
		if state.Load() != recordFree || !state.CompareAndSwap(recordFree, recordFilling) {
			continue
		}
		r := t.mem[inFlightOffset+i*inFlightRecordSize : inFlightOffset+(i+1)*inFlightRecordSize]
		line := r[16:]
		n := copy(line, method)
		if n < len(line) {
			line[n] = ' '
			n++
			n += copy(line[n:], target)
		}
		binary.LittleEndian.PutUint32(r[4:8], uint32(n))
		binary.LittleEndian.PutUint64(r[8:16], uint64(time.Now().UnixNano()))
		state.Store(recordInUse)
		return i
	}
	return -1
}

// Release frees record i (Claim's result; -1 is nothing).
func (t *InFlight) Release(i int) {
	if t == nil || i < 0 {
		return
	}
	t.state(i).Store(recordFree)
}

// Request is a request that was inside a worker's app.
type Request struct {
	Line    string // method and target, cut at about 110 bytes
	Started time.Time
}

// InFlightRequests reads the table in a worker's heartbeat mapping (the
// master's side of it).
func InFlightRequests(mem []byte) []Request {
	if len(mem) < HeartbeatSize {
		return nil
	}
	t := InFlight{mem: mem}
	var out []Request
	for i := 0; i < inFlightRecords; i++ {
		if t.state(i).Load() != recordInUse {
			continue
		}
		r := mem[inFlightOffset+i*inFlightRecordSize : inFlightOffset+(i+1)*inFlightRecordSize]
		n := min(int(binary.LittleEndian.Uint32(r[4:8])), inFlightLineMax)
		started := int64(binary.LittleEndian.Uint64(r[8:16]))
		out = append(out, Request{Line: string(r[16 : 16+n]), Started: time.Unix(0, started)})
	}
	return out
}

// InAppBefore counts the requests in a worker's heartbeat mapping that
// entered the app before t (the master's side): as many as the worker has
// handler threads means every thread is held by a request that has
// taken a while, and a new connection would wait behind them.
func InAppBefore(mem []byte, t time.Time) int {
	if len(mem) < HeartbeatSize {
		return 0
	}
	table := InFlight{mem: mem}
	before := t.UnixNano()
	n := 0
	for i := 0; i < inFlightRecords; i++ {
		if table.state(i).Load() != recordInUse {
			continue
		}
		r := mem[inFlightOffset+i*inFlightRecordSize:]
		if int64(binary.LittleEndian.Uint64(r[8:16])) < before {
			n++
		}
	}
	return n
}
