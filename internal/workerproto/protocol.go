// Package workerproto is what a --workers master and its workers share:
// how a worker is started (its variables and descriptors), the lines they
// exchange on the control socket, and the layout of the heartbeat file
// both map. Pure Go, no cgo: package supervisor (the master, which never
// starts Python) and package server (the worker) import it, and neither
// imports the other.
package workerproto

// A worker is the same binary, re-executed by the master with these
// variables set and these files open as descriptors 3 to 5, and from 6
// on the handoff's (handoff.go); the master's spawn.go says why it forks
// with syscall.ForkExec.
const (
	// SlotEnv holds the worker's slot number; its presence is what makes
	// the process a worker.
	SlotEnv = "M0_WORKER_SLOT"
	// MaxRequestsEnv holds the requests the worker serves before it asks
	// to be replaced (0: no limit); the master adds the jitter.
	MaxRequestsEnv = "M0_WORKER_MAX_REQUESTS"

	ListenFD    = 3 // the listening socket, owned by the master
	ControlFD   = 4 // one end of a socketpair: lines both ways
	HeartbeatFD = 5 // a file of HeartbeatSize bytes, mapped by both processes
)

// The control lines, one per line. A worker says ready once the app is
// imported, ASGI lifespan startup has completed and the loop is about to
// arm accept; limit once it has served its --max-requests and started
// draining. The master says drain (stop accepting, finish, exit: a
// replacement takes over the socket), stop (shut down as at a first
// SIGTERM) or reopen (the log files). It stops a ready worker with a line
// rather than SIGTERM: where the operator signals every process
// (systemd's default KillMode=control-group), the master's SIGTERM would
// be the worker's second, "exit now"; a booting worker, which reads no
// line yet, gets SIGTERM.
const (
	Ready = "ready"
	Limit = "limit"
	// Stuck: a request outlived --request-timeout; the worker has started
	// draining and wants a replacement.
	Stuck  = "stuck"
	Drain  = "drain"
	Stop   = "stop"
	Reopen = "reopen"
	// Backend, then a space and the loop's backend description, goes
	// before ready: the master's metrics name the backend in use.
	Backend = "backend"
	// Capacity, then a space and a number, goes before ready from a
	// worker whose app serves that many requests at once (WSGI's handler
	// threads): the master steers new connections away from it while
	// that many have been in the app for a while.
	Capacity = "capacity"
	// Stopping: the worker has begun its shutdown (a signal, or the
	// master gone) and accepts no more; a stopping master ends the
	// listening of a socket once every worker holding it has said so.
	Stopping = "stopping"
)
