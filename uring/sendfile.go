//go:build linux

package uring

import (
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/readiness"
	"golang.org/x/sys/unix"
)

// pipeSize is asked of every pipe (F_SETPIPE_SZ, 2.6.35): 1 MiB, the
// default fs.pipe-max-size an unprivileged process may ask for, makes a
// splice pair move 16 times the default 64 KiB. Refused, the pipe keeps
// its default and the sends only take more splices.
const pipeSize = 1 << 20

// pipePair is the kernel buffer a file's pages pass through on their way
// to a socket. capacity is what one splice into it may move.
type pipePair struct {
	read, write int
	capacity    int
}

// fileSend is the progress of one QueueSendFile.
type fileSend struct {
	active    bool
	file      int
	offset    int64 // where the next splice into the pipe reads from
	remaining int64 // bytes of the range not yet spliced into the pipe
	inPipe    int   // bytes in the pipe not yet spliced to the socket
	pipe      pipePair
}

// QueueSendFile implements loop.Backend: the range goes file -> pipe ->
// socket in splices (see the package comment). The backend owns file from
// now on and closes it before the completion is delivered.
func (b *Backend) QueueSendFile(fd int, slot, gen uint32, file int, offset, length int64) {
	state := b.state(slot, gen)
	state.fd = int32(fd)
	state.pending++
	pipe, err := b.takePipe()
	if err != nil {
		unix.Close(file)
		state.pending--
		b.held = append(b.held, heldCompletion{
			completion: loop.Completion{Op: loop.OpSend, Slot: slot, Gen: gen, Res: -int32(readiness.Errno(err))},
			bufferID:   -1,
		})
		return
	}
	state.file = fileSend{active: true, file: file, offset: offset, remaining: length, pipe: pipe}
	b.submitSpliceIn(state, slot, gen)
}

func (b *Backend) submitSpliceIn(state *slotState, slot, gen uint32) {
	entry := b.sqe()
	if entry == nil {
		return
	}
	f := &state.file
	if f.remaining == 0 {
		// An empty range: a no-op completes it through the same path.
		entry.PrepareNop()
	} else {
		chunk := min(f.remaining, int64(f.pipe.capacity))
		entry.PrepareSplice(f.file, f.offset, f.pipe.write, -1, uint32(chunk), 0)
	}
	entry.UserData = userData(kindSpliceIn, slot, gen)
}

func (b *Backend) submitSpliceOut(state *slotState, slot, gen uint32) {
	entry := b.sqe()
	if entry == nil {
		return
	}
	f := &state.file
	entry.PrepareSplice(f.pipe.read, -1, int(state.fd), -1, uint32(f.inPipe), 0)
	entry.UserData = userData(kindSpliceOut, slot, gen)
}

func (b *Backend) submitPollOut(state *slotState, slot, gen uint32) {
	b.filePolls++
	entry := b.sqe()
	if entry == nil {
		return
	}
	entry.PreparePollAdd(int(state.fd), unix.POLLOUT)
	entry.UserData = userData(kindPollOut, slot, gen)
}

// completeFileStep moves a file send one step on: after the pipe is
// filled, empty it into the socket; after the socket took it all, fill the
// pipe again; after a full socket had room again, splice once more.
func (b *Backend) completeFileStep(k kind, res int32, slot, gen uint32, out []loop.Completion, n int) int {
	state := b.find(slot, gen)
	if state == nil || !state.file.active {
		return n
	}
	f := &state.file
	switch {
	case state.closing:
		return b.endFileSend(state, slot, gen, -int32(unix.ECANCELED), out, n)
	case k == kindSpliceOut && res == -int32(unix.EAGAIN):
		b.submitPollOut(state, slot, gen)
		return n
	case res < 0:
		return b.endFileSend(state, slot, gen, res, out, n)
	}
	switch k {
	case kindSpliceIn:
		if f.remaining == 0 {
			return b.endFileSend(state, slot, gen, 0, out, n)
		}
		if res == 0 {
			// End of file before the end of the range.
			return b.endFileSend(state, slot, gen, -int32(loop.FileEnded), out, n)
		}
		f.offset += int64(res)
		f.remaining -= int64(res)
		f.inPipe = int(res)
		b.submitSpliceOut(state, slot, gen)
	case kindSpliceOut:
		if res == 0 {
			// A socket that takes nothing of a full pipe is broken.
			return b.endFileSend(state, slot, gen, -int32(unix.EPIPE), out, n)
		}
		f.inPipe -= int(res)
		switch {
		case f.inPipe > 0:
			b.submitSpliceOut(state, slot, gen)
		case f.remaining > 0:
			b.submitSpliceIn(state, slot, gen)
		default:
			return b.endFileSend(state, slot, gen, 0, out, n)
		}
	case kindPollOut:
		// Room, or an error the next splice reports.
		b.submitSpliceOut(state, slot, gen)
	}
	return n
}

// endFileSend closes the file, keeps the pipe if it is empty (else closes
// it: stale bytes must never lead another response), and delivers OpSend.
func (b *Backend) endFileSend(state *slotState, slot, gen uint32, res int32, out []loop.Completion, n int) int {
	f := &state.file
	unix.Close(f.file)
	if res == 0 && f.inPipe == 0 {
		b.pipes = append(b.pipes, f.pipe)
	} else {
		b.closePipe(f.pipe)
	}
	state.file = fileSend{}
	state.pending--
	n = b.emit(loop.Completion{Op: loop.OpSend, Slot: slot, Gen: gen, Res: res}, -1, out, n)
	return b.finishClose(state, slot, out, n)
}

// takePipe returns an idle pipe pair, or opens one. Both ends block: the
// splices run in io-wq workers, and a pipe is only filled when empty and
// only emptied when it holds bytes, so neither end waits.
func (b *Backend) takePipe() (pipePair, error) {
	if n := len(b.pipes); n > 0 {
		p := b.pipes[n-1]
		b.pipes = b.pipes[:n-1]
		return p, nil
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return pipePair{}, err
	}
	capacity, err := unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, pipeSize)
	if err != nil {
		capacity, err = unix.FcntlInt(uintptr(fds[1]), unix.F_GETPIPE_SZ, 0)
		if err != nil {
			capacity = 64 << 10
		}
	}
	b.pipesOpen++
	return pipePair{read: fds[0], write: fds[1], capacity: capacity}, nil
}

func (b *Backend) closePipe(p pipePair) {
	unix.Close(p.read)
	unix.Close(p.write)
	b.pipesOpen--
}

// closeFiles runs at Close, after the ring is gone: the files and pipes of
// sends still in flight, and the idle pipes.
func (b *Backend) closeFiles() {
	for i := range b.slots {
		for j := range b.slots[i] {
			state := &b.slots[i][j]
			if state.file.active {
				unix.Close(state.file.file)
				b.closePipe(state.file.pipe)
				state.file = fileSend{}
			}
		}
	}
	for _, p := range b.pipes {
		b.closePipe(p)
	}
	b.pipes = nil
}
