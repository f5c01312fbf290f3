package supervisor

import "time"

// Server is what the master needs of the configuration its workers serve
// (package server's Config, which cli hands over). An interface rather
// than package server itself: that package embeds CPython, and the
// master never starts Python, so it builds and tests without cgo.
type Server interface {
	// Validate checks the workers' configuration, once, before any
	// starts: a mistake is one line, not one per worker.
	Validate() error
	// Port is --port; GracefulTimeout --graceful-timeout, which the
	// master gives a drain before it kills; MetricsAddress
	// --metrics-address ("": off); ServesApp: a Python app, not --native.
	Port() int
	GracefulTimeout() time.Duration
	MetricsAddress() string
	ServesApp() bool
	// SharedListener: the configuration names one socket for every
	// worker (--uds, --fd, systemd socket activation).
	SharedListener() bool
	// Listen opens a listening socket for the workers (with SO_REUSEPORT
	// when reusePort is set: one per slot, the kernel spreading
	// connections among them) on port (0: any), or takes the one socket
	// the configuration names.
	Listen(port int, reusePort bool) (Socket, error)
	// CheckTLS loads the TLS files again before a reload starts workers
	// that will: nil when they load or TLS is off.
	CheckTLS() error
	// ReopenLogFiles reopens --error-log-file and --access-log-file
	// (SIGUSR1).
	ReopenLogFiles() error
}

// Socket is a listening socket the master holds for its workers.
type Socket struct {
	FD   int
	Port int    // a TCP socket's port; 0 for a Unix socket
	URL  string // where it serves, for the start line
	// Inherited: it came from elsewhere (--fd, systemd) and outlives
	// the master, so it is left listening when the master stops.
	Inherited bool
	// Close closes it (and removes a --uds socket's file the master
	// made).
	Close func()
}
