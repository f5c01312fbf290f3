package counters

import (
	"testing"
	"time"
	"unsafe"
)

// The layout is the heartbeat file's: 8 bytes a word, in the stated
// order.
func TestWordsLayout(t *testing.T) {
	var w Words
	if size := unsafe.Sizeof(w); size != uintptr(8*WordCount) {
		t.Fatalf("Words takes %d bytes, want %d", size, 8*WordCount)
	}
	w.Response(204)
	w.Response(999)
	w.Observe(7 * time.Millisecond)
	w.Observe(time.Minute)
	w.Overloaded()
	w.SetGauges(3, 2)
	got := w.Read()
	want := Loop{DurationSum: int64(7*time.Millisecond + time.Minute), Overloaded: 1, Open: 3, InFlight: 2}
	want.Responses[2], want.Responses[0] = 1, 1
	want.Durations[1], want.Durations[Buckets-1] = 1, 1
	if got != want {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	words := (*[WordCount]int64)(unsafe.Pointer(&w))
	if words[responsesWord+2] != 1 || words[durationsWord+1] != 1 || words[inFlightWord] != 2 || words[WordCount-1] != 2 {
		t.Fatalf("words out of their stated places: %v", words)
	}
	var off *Words
	off.Response(200)
	off.Observe(time.Second)
	off.Overloaded()
	off.SetGauges(1, 1)
	if off.Read() != (Loop{}) {
		t.Fatal("a nil Words read as counting")
	}
}
