//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package server

import (
	"fmt"
	"runtime"

	"github.com/m0serve/m0serve/kq"
	"github.com/m0serve/m0serve/loop"
)

// newBackend makes the loop's I/O backend for --backend kind. On macOS and
// the BSDs kqueue is the only one: auto and kqueue choose it.
func newBackend(kind string, logf func(format string, args ...any)) (loop.Backend, error) {
	switch kind {
	case "auto", "kqueue":
		b, err := kq.New()
		if err != nil {
			return nil, fmt.Errorf("--backend %s: %w", kind, err)
		}
		return b, nil
	case "uring", "epoll":
		return nil, fmt.Errorf("--backend %s: not available on %s", kind, runtime.GOOS)
	}
	return nil, fmt.Errorf("--backend %s: unknown backend (want auto, uring, epoll or kqueue)", kind)
}

// Backends lists the I/O backends this build has.
func Backends() []string { return []string{"kqueue"} }

// AutoBackend names the backend --backend auto takes: kqueue, the only one.
func AutoBackend() (name string, why error) { return "kqueue", nil }
