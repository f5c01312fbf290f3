package readiness

import (
	"errors"

	"golang.org/x/sys/unix"
)

// SignalWake writes token to a readiness backend's wake descriptor (an
// eventfd, or a pipe's write end) for Backend.Wake. EAGAIN means the
// counter or the pipe is full, so a wake is pending already: success.
// EINTR retries.
func SignalWake(fd int, token []byte) error {
	for {
		_, err := unix.Write(fd, token)
		switch {
		case err == nil, errors.Is(err, unix.EAGAIN):
			return nil
		case !errors.Is(err, unix.EINTR):
			return err
		}
	}
}
