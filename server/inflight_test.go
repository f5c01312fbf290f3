package server

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestInFlightTable(t *testing.T) {
	table := &inFlight{mem: make([]byte, HeartbeatSize)}
	long := "/" + strings.Repeat("x", 200)
	a := table.claim([]byte("GET"), []byte("/a?b=c"))
	b := table.claim([]byte("POST"), []byte(long))
	got := InFlightRequests(table.mem)
	if len(got) != 2 || got[0].Line != "GET /a?b=c" || got[1].Line != ("POST " + long)[:inFlightLineMax] {
		t.Fatalf("table holds %+v", got)
	}
	table.release(a)
	if got := InFlightRequests(table.mem); len(got) != 1 || !strings.HasPrefix(got[0].Line, "POST /xx") {
		t.Fatalf("after a release: %+v", got)
	}
	table.release(b)
	// Full: the requests past the table's size go unnamed, and a release
	// makes room again.
	var records []int
	for i := 0; i < inFlightRecords+2; i++ {
		records = append(records, table.claim([]byte("GET"), []byte(fmt.Sprint("/", i))))
	}
	if records[inFlightRecords] != -1 || len(InFlightRequests(table.mem)) != inFlightRecords {
		t.Fatalf("a full table: records %v", records)
	}
	table.release(records[3])
	table.release(-1)
	if i := table.claim([]byte("GET"), []byte("/again")); i != records[3] {
		t.Fatalf("claim after a release took record %d, want %d", i, records[3])
	}
	var none *inFlight
	if none.claim([]byte("GET"), []byte("/")) != -1 {
		t.Fatal("a single process's nil table claimed a record")
	}
	none.release(0)
}

// The handler threads claim and release a record per request: no
// allocation on the request path.
func TestInFlightAllocs(t *testing.T) {
	table := &inFlight{mem: make([]byte, HeartbeatSize)}
	method, target := []byte("GET"), []byte("/some/path?query=1")
	if n := testing.AllocsPerRun(1000, func() {
		table.release(table.claim(method, target))
	}); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}

// InAppBefore counts the requests in the app since before a time: the
// master's test of a busy worker.
func TestInAppBefore(t *testing.T) {
	table := &inFlight{mem: make([]byte, HeartbeatSize)}
	before := time.Now()
	a := table.claim([]byte("GET"), []byte("/a"))
	table.claim([]byte("GET"), []byte("/b"))
	if n := InAppBefore(table.mem, before.Add(-time.Second)); n != 0 {
		t.Errorf("%d requests in the app since before they came", n)
	}
	if n := InAppBefore(table.mem, time.Now().Add(time.Second)); n != 2 {
		t.Errorf("%d requests in the app, want 2", n)
	}
	table.release(a)
	if n := InAppBefore(table.mem, time.Now().Add(time.Second)); n != 1 {
		t.Errorf("%d requests in the app after a release, want 1", n)
	}
	if n := InAppBefore(nil, time.Now()); n != 0 {
		t.Errorf("no mapping: %d", n)
	}
}
