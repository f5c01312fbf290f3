package loop

// bufferPool keeps the loop's receive and send buffers for reuse. It is
// touched only by the loop thread, so it is a plain free list: a slot takes
// buffers on first use and gives them back when it is idle or closed, so
// memory follows active connections, not --max-connections.
type bufferPool struct {
	recvSize int
	recv     [][]byte
	send     [][]byte
}

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
		return b
	}
	return make([]byte, p.recvSize)
}

func (p *bufferPool) putRecv(b []byte) {
	if b == nil || len(b) != p.recvSize || len(p.recv) >= maxFreeBuffers {
		return
	}
	p.recv = append(p.recv, b)
}

func (p *bufferPool) getSend() []byte {
	if n := len(p.send); n > 0 {
		b := p.send[n-1]
		p.send[n-1] = nil
		p.send = p.send[:n-1]
		return b
	}
	return make([]byte, 0, sendInitialSize)
}

func (p *bufferPool) putSend(b []byte) {
	if b == nil || cap(b) > sendKeepLimit || len(p.send) >= maxFreeBuffers {
		return
	}
	p.send = append(p.send, b[:0])
}
