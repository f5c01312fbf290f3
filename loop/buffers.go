package loop

// bufferPool keeps the loop's receive and send buffers for reuse. It is
// touched only by the loop thread, so it is a plain free list: a slot takes
// buffers on first use and gives them back when it is idle or closed, so
// memory follows active connections, not --max-connections.
type bufferPool struct {
	recvSize int
	recv     [][]byte
	send     [][]byte

	// The fewest buffers each free list held since the last trim: that
	// many went unused for the whole interval.
	recvLow, sendLow int
	// released counts bytes dropped since memory was last returned.
	released int
}

// keepFreeBuffers is how many idle buffers of each kind a trim keeps: a
// burst of new connections takes them without allocating.
const keepFreeBuffers = 64

// returnAfter is how many bytes of dropped buffers make a trim ask the
// runtime to give memory back to the OS at once (trim's result).
const returnAfter = 4 << 20

// Free lists keep at most this many buffers each; beyond it a returned
// buffer is left to the garbage collector.
const maxFreeBuffers = 1024

// sendKeepLimit: a send buffer grown past this (a large response) is not
// kept, so one big response does not pin its memory for good.
const sendKeepLimit = 256 << 10

const sendInitialSize = 4 << 10

func (p *bufferPool) init(recvSize int) { p.recvSize = recvSize }

func (p *bufferPool) getRecv() []byte {
	if n := len(p.recv); n > 0 {
		b := p.recv[n-1]
		p.recv[n-1] = nil
		p.recv = p.recv[:n-1]
		p.recvLow = min(p.recvLow, n-1)
		return b
	}
	return make([]byte, p.recvSize)
}

func (p *bufferPool) putRecv(b []byte) {
	if b != nil && len(b) != p.recvSize {
		p.released += cap(b) // grown for a large body or message: trim returns it
		return
	}
	if b == nil || len(p.recv) >= maxFreeBuffers {
		return
	}
	p.recv = append(p.recv, b)
}

func (p *bufferPool) getSend() []byte {
	if n := len(p.send); n > 0 {
		b := p.send[n-1]
		p.send[n-1] = nil
		p.send = p.send[:n-1]
		p.sendLow = min(p.sendLow, n-1)
		return b
	}
	return make([]byte, 0, sendInitialSize)
}

func (p *bufferPool) putSend(b []byte) {
	if cap(b) > sendKeepLimit {
		p.released += cap(b) // a large response's: trim returns it
		return
	}
	if b == nil || len(p.send) >= maxFreeBuffers {
		return
	}
	p.send = append(p.send, b[:0])
}

// trim runs once a second: the buffers that stayed in a free list for
// the whole second past keepFreeBuffers are dropped, so that memory taken
// at a peak (thousands of slow clients at once) goes back once the peak
// is over rather than staying in the free lists for good. It reports
// when enough was dropped since the last report for the caller to return
// memory to the OS now: an idle server allocates nothing, so no garbage
// collection would run to free the dropped buffers for minutes.
func (p *bufferPool) trim() bool {
	var n int
	p.recv, n = dropIdle(p.recv, p.recvLow)
	p.released += n
	p.send, n = dropIdle(p.send, p.sendLow)
	p.released += n
	p.recvLow, p.sendLow = len(p.recv), len(p.send)
	if p.released < returnAfter {
		return false
	}
	p.released = 0
	return true
}

// dropIdle drops from free the buffers beyond keepFreeBuffers that low
// says went unused, and returns the list and the bytes dropped.
func dropIdle(free [][]byte, low int) ([][]byte, int) {
	idle := min(low, len(free)) - keepFreeBuffers
	if idle <= 0 {
		return free, 0
	}
	bytes := 0
	for _, b := range free[:idle] {
		bytes += cap(b)
	}
	// The bottom of the list is what stayed unused; the top is reused first.
	kept := copy(free, free[idle:])
	clear(free[kept:])
	free = free[:kept]
	if cap(free) > 4*keepFreeBuffers && len(free) < cap(free)/4 {
		free = append([][]byte(nil), free...)
	}
	return free, bytes
}
