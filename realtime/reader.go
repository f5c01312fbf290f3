package realtime

import "golang.org/x/sys/unix"

// Receive waits for the next datagram on a worker's read end and returns it
// in buf (at least MaxDatagram long).
func (w *Worker) Receive(buf []byte) (int, error) { return recv(w.Read, buf) }

func recv(fd int, buf []byte) (int, error) {
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}
