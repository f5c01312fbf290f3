//go:build linux

package server

import (
	"errors"
	"fmt"

	"github.com/m0serve/m0serve/epoll"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/uring"
)

// newURingBackend and newEpollBackend are the constructors newBackend
// chooses between; tests replace them to drive every branch.
var (
	newURingBackend = func() (loop.Backend, error) {
		b, err := uring.New(uring.Options{})
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	newEpollBackend = func() (loop.Backend, error) {
		b, err := epoll.New()
		if err != nil {
			return nil, err
		}
		return b, nil
	}
)

// newBackend makes the loop's I/O backend for --backend kind: auto,
// uring, epoll or kqueue. auto takes io_uring and falls back to epoll only
// when io_uring cannot be used at all here (uring.ErrUnavailable: Docker's
// default seccomp profile, kernel.io_uring_disabled, an old kernel),
// logging the reason once; any other io_uring failure is a real error and
// is returned, not hidden behind a slower backend.
func newBackend(kind string, logf func(format string, args ...any)) (loop.Backend, error) {
	switch kind {
	case "auto":
		b, err := newURingBackend()
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, uring.ErrUnavailable) {
			return nil, fmt.Errorf("--backend auto: %w", err)
		}
		logf("m0serve: warning: falling back to epoll: %v", err)
		b, epollErr := newEpollBackend()
		if epollErr != nil {
			return nil, fmt.Errorf("--backend auto: %w; and epoll: %w", err, epollErr)
		}
		return b, nil
	case "uring":
		b, err := newURingBackend()
		if err != nil {
			return nil, fmt.Errorf("--backend uring: %w", err)
		}
		return b, nil
	case "epoll":
		b, err := newEpollBackend()
		if err != nil {
			return nil, fmt.Errorf("--backend epoll: %w", err)
		}
		return b, nil
	case "kqueue":
		return nil, errors.New("--backend kqueue: not available on linux")
	}
	return nil, fmt.Errorf("--backend %s: unknown backend (want auto, uring, epoll or kqueue)", kind)
}

// Backends lists the I/O backends this build has, in the order auto tries
// them.
func Backends() []string { return []string{"io_uring", "epoll"} }

// AutoBackend names the backend --backend auto takes on this machine now,
// by setting io_uring up and closing it: io_uring; or epoll, with the
// reason io_uring cannot be used here (the start line's warning); or ""
// with the io_uring failure that auto would stop on.
func AutoBackend() (name string, why error) {
	b, err := newURingBackend()
	switch {
	case err == nil:
		b.Close()
		return "io_uring", nil
	case errors.Is(err, uring.ErrUnavailable):
		return "epoll", err
	}
	return "", err
}
