package readiness

import (
	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
)

// fileRange is the file part of a send queued with QueueSendFile.
type fileRange struct {
	open      bool // the table holds fd and closes it when the send ends
	fd        int
	offset    int64 // where the next byte comes from
	remaining int64
}

// close gives up the file; the table owns it from QueueSendFile on.
func (f *fileRange) close() {
	if f.open {
		unix.Close(f.fd)
		f.open = false
	}
}

// QueueSendFile arms sending length bytes of file from offset
// (loop.Backend.QueueSendFile). It completes as OpSend: Res 0 when every
// byte went out, -FileEnded when the file ended first, else -errno. The
// file is closed before the completion is handed out.
func (t *Table) QueueSendFile(fd int, slot, gen uint32, file int, offset, length int64) {
	if errno := t.register(fd); errno != 0 {
		unix.Close(file)
		t.Finish(loop.Completion{Op: loop.OpSend, Slot: slot, Gen: gen, Res: -int32(errno)})
		return
	}
	st := &t.sockets[fd]
	st.send = operation{armed: true, slot: slot, gen: gen,
		file: fileRange{open: true, fd: file, offset: offset, remaining: length}}
	if st.writable {
		t.markReady(fd)
	}
}

// sendFileSome sends the file until the range is all sent, the socket is
// full (the operation stays armed and resumes from the offset reached at
// the next write edge), the file ends or an error.
func (t *Table) sendFileSome(fd int, st *socketState) (loop.Completion, bool) {
	f := &st.send.file
	for f.remaining > 0 {
		written, errno := t.files.send(fd, f.fd, f.offset, f.remaining)
		switch errno {
		case 0:
			if written == 0 {
				// The file is shorter than the range: the response
				// cannot end validly.
				return t.endFileSend(st, -int32(loop.FileEnded)), true
			}
			f.offset += int64(written)
			f.remaining -= int64(written)
		case unix.EINTR:
		case unix.EAGAIN:
			st.writable = false
			return loop.Completion{}, false
		default:
			return t.endFileSend(st, -int32(errno)), true
		}
	}
	return t.endFileSend(st, 0), true
}

func (t *Table) endFileSend(st *socketState, res int32) loop.Completion {
	st.send.file.close()
	return t.endSend(st, res)
}
