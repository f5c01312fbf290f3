package server

import (
	"encoding/binary"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/m0serve/m0serve/loop"
)

// The heartbeat file a worker shares with its master: the loop's stamp,
// the loop's counters for the master's metrics, then a table of the
// requests inside the app, so that the master can say which request a
// worker was serving when it died (os._exit, a segfault, a kill) and how
// long it had been there.
//
//	[0, 8)        the loop's last stamp, unix nanoseconds
//	[8, 8+Stats)  loop.Stats (WorkerStats)
//	[256, 264)    AppStats (WorkerAppStats)
//	[512, 4096)   inFlightRecords records of inFlightRecordSize bytes:
//	              state uint32, line length uint32, start unix ns int64,
//	              the request line's method and target (cut)
//
// A record is claimed with a compare-and-swap on its state, filled, then
// published; freeing it is one store. Writers are the handler threads (or
// the ASGI executor, or the loop thread with --threads 0) and allocate
// nothing; the master reads the table once the worker has exited (a
// record a crash left half filled reads as not there).
const (
	HeartbeatSize = 4096

	statsOffset        = 8
	appStatsOffset     = 256
	inFlightOffset     = 512
	inFlightRecordSize = 128
	inFlightRecords    = (HeartbeatSize - inFlightOffset) / inFlightRecordSize
	inFlightLineMax    = inFlightRecordSize - 16
)

// The counters must end before the next starts.
var (
	_ [appStatsOffset - statsOffset - int(unsafe.Sizeof(loop.Stats{}))]struct{}
	_ [inFlightOffset - appStatsOffset - int(unsafe.Sizeof(AppStats{}))]struct{}
)

// Record states.
const (
	recordFree uint32 = iota
	recordFilling
	recordInUse
)

// inFlight is a worker's table of requests inside the app; nil in a
// single process, where nobody reads it.
type inFlight struct {
	mem []byte // the whole heartbeat mapping
}

func (t *inFlight) state(i int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&t.mem[inFlightOffset+i*inFlightRecordSize]))
}

// claim records method and target as in the app from now, and returns
// the record to release, or -1 when the table is full (more requests in
// flight than it holds: an ASGI worker's; those go unnamed).
func (t *inFlight) claim(method, target []byte) int {
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

// release frees record i (claim's result; -1 is nothing).
func (t *inFlight) release(i int) {
	if t == nil || i < 0 {
		return
	}
	t.state(i).Store(recordFree)
}

// InFlightRequest is a request that was inside a worker's app.
type InFlightRequest struct {
	Line    string // method and target, cut at about 110 bytes
	Started time.Time
}

// InFlightRequests reads the table in a worker's heartbeat mapping (the
// master's side of it).
func InFlightRequests(mem []byte) []InFlightRequest {
	if len(mem) < HeartbeatSize {
		return nil
	}
	t := inFlight{mem: mem}
	var out []InFlightRequest
	for i := 0; i < inFlightRecords; i++ {
		if t.state(i).Load() != recordInUse {
			continue
		}
		r := mem[inFlightOffset+i*inFlightRecordSize : inFlightOffset+(i+1)*inFlightRecordSize]
		n := min(int(binary.LittleEndian.Uint32(r[4:8])), inFlightLineMax)
		started := int64(binary.LittleEndian.Uint64(r[8:16]))
		out = append(out, InFlightRequest{Line: string(r[16 : 16+n]), Started: time.Unix(0, started)})
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
	table := inFlight{mem: mem}
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
