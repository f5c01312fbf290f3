package workerproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestInFlightTable(t *testing.T) {
	table := NewInFlight(make([]byte, HeartbeatSize))
	long := "/" + strings.Repeat("x", 200)
	a := table.Claim([]byte("GET"), []byte("/a?b=c"))
	b := table.Claim([]byte("POST"), []byte(long))
	got := InFlightRequests(table.mem)
	if len(got) != 2 || got[0].Line != "GET /a?b=c" || got[1].Line != ("POST " + long)[:inFlightLineMax] {
		t.Fatalf("table holds %+v", got)
	}
	table.Release(a)
	if got := InFlightRequests(table.mem); len(got) != 1 || !strings.HasPrefix(got[0].Line, "POST /xx") {
		t.Fatalf("after a release: %+v", got)
	}
	table.Release(b)
	// Full: the requests past the table's size go unnamed, and a release
	// makes room again.
	var records []int
	for i := 0; i < inFlightRecords+2; i++ {
		records = append(records, table.Claim([]byte("GET"), []byte(fmt.Sprint("/", i))))
	}
	if records[inFlightRecords] != -1 || len(InFlightRequests(table.mem)) != inFlightRecords {
		t.Fatalf("a full table: records %v", records)
	}
	table.Release(records[3])
	table.Release(-1)
	if i := table.Claim([]byte("GET"), []byte("/again")); i != records[3] {
		t.Fatalf("claim after a release took record %d, want %d", i, records[3])
	}
	var none *InFlight
	if none.Claim([]byte("GET"), []byte("/")) != -1 {
		t.Fatal("a single process's nil table claimed a record")
	}
	none.Release(0)
}

// The handler threads claim and release a record per request: no
// allocation on the request path.
func TestInFlightAllocs(t *testing.T) {
	table := NewInFlight(make([]byte, HeartbeatSize))
	method, target := []byte("GET"), []byte("/some/path?query=1")
	if n := testing.AllocsPerRun(1000, func() {
		table.Release(table.Claim(method, target))
	}); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}

// InAppBefore counts the requests in the app since before a time: the
// master's test of a busy worker.
func TestInAppBefore(t *testing.T) {
	table := NewInFlight(make([]byte, HeartbeatSize))
	before := time.Now()
	a := table.Claim([]byte("GET"), []byte("/a"))
	table.Claim([]byte("GET"), []byte("/b"))
	if n := InAppBefore(table.mem, before.Add(-time.Second)); n != 0 {
		t.Errorf("%d requests in the app since before they came", n)
	}
	if n := InAppBefore(table.mem, time.Now().Add(time.Second)); n != 2 {
		t.Errorf("%d requests in the app, want 2", n)
	}
	table.Release(a)
	if n := InAppBefore(table.mem, time.Now().Add(time.Second)); n != 1 {
		t.Errorf("%d requests in the app after a release, want 1", n)
	}
	if n := InAppBefore(nil, time.Now()); n != 0 {
		t.Errorf("no mapping: %d", n)
	}
}

// TestAppStatsAllocatesNothing: the handler's clock reading and count
// are on the request path.
func TestAppStatsAllocatesNothing(t *testing.T) {
	stats := &AppStats{}
	if allocs := testing.AllocsPerRun(1000, func() { stats.Served(stats.Start()) }); allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
	if stats.Busy.Load() <= 0 {
		t.Errorf("busy %d after 1001 requests", stats.Busy.Load())
	}
	var off *AppStats
	off.Served(off.Start()) // metrics off: nothing, no panic
}

// BenchmarkAppStats is the busy time's cost per request in the handler:
// two clock readings (vDSO) and an atomic add; off, nothing.
func BenchmarkAppStats(b *testing.B) {
	for _, stats := range []*AppStats{nil, {}} {
		name := "off"
		if stats != nil {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				stats.Served(stats.Start())
			}
		})
	}
}

// The master refuses a worker whose heartbeat file is of another layout
// (another binary's, after a swap and a SIGHUP), or of none (a binary
// from before the layout was versioned, which writes nothing there).
func TestCheckLayout(t *testing.T) {
	mem := make([]byte, HeartbeatSize)
	var layoutErr *LayoutError
	if err := CheckLayout(mem); !errors.As(err, &layoutErr) || layoutErr.Version != 0 {
		t.Fatalf("a file no worker wrote its layout into: %v", err)
	}
	WriteLayout(mem)
	if err := CheckLayout(mem); err != nil {
		t.Fatalf("this binary's layout: %v", err)
	}
	binary.LittleEndian.PutUint32(mem[layoutOffset+4:], LayoutVersion+1)
	if err := CheckLayout(mem); !errors.As(err, &layoutErr) || layoutErr.Version != LayoutVersion+1 ||
		!strings.Contains(err.Error(), "restart the master") {
		t.Fatalf("a newer layout: %v", err)
	}
	// The stamp and the counters do not touch the layout's word.
	WriteLayout(mem)
	Stamp(mem).Store(-1)
	LoopWords(mem).SetGauges(-1, -1)
	LoopWords(mem).Response(500)
	AppStatsIn(mem).Busy.Store(-1)
	for i := 0; i < inFlightRecords; i++ {
		NewInFlight(mem).Claim([]byte("GET"), []byte("/"+strings.Repeat("x", 200)))
	}
	if err := CheckLayout(mem); err != nil {
		t.Fatalf("after the worker wrote every part: %v", err)
	}
	if err := CheckLayout(nil); err == nil {
		t.Fatal("no mapping passed the check")
	}
}
