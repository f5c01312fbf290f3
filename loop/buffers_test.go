package loop

import "testing"

// trim drops what stayed idle in the free lists a whole interval, past
// keepFreeBuffers, and reports once enough was dropped to return.
func TestBufferPoolTrim(t *testing.T) {
	var p bufferPool
	p.init(16 << 10)
	var held [][]byte
	for range 1000 {
		held = append(held, p.getRecv())
	}
	for _, b := range held {
		p.putRecv(b)
	}
	// The first trim only notes the low mark of an interval that began
	// with the buffers in use.
	p.trim()
	if len(p.recv) != 1000 {
		t.Fatalf("first trim: %d free, want 1000 kept", len(p.recv))
	}
	// A burst takes 100 in the next interval: 900 stayed idle; all but
	// keepFreeBuffers of those go.
	held = held[:0]
	for range 100 {
		held = append(held, p.getRecv())
	}
	for _, b := range held {
		p.putRecv(b)
	}
	if !p.trim() {
		t.Fatal("dropping 13 MiB did not ask for memory back")
	}
	if want := 1000 - (900 - keepFreeBuffers); len(p.recv) != want {
		t.Fatalf("second trim: %d free, want %d", len(p.recv), want)
	}
	// Idle at the same level again: down to keepFreeBuffers.
	p.trim()
	if len(p.recv) != keepFreeBuffers {
		t.Fatalf("third trim: %d free, want %d", len(p.recv), keepFreeBuffers)
	}
	// A large response's send buffer is not kept, and counts.
	p.released = 0
	p.putSend(make([]byte, 0, returnAfter))
	if len(p.send) != 0 || !p.trim() {
		t.Fatalf("a %d-byte send buffer: kept %d, not reported", returnAfter, len(p.send))
	}
}
