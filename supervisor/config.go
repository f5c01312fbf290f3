// Package supervisor is the master process of --workers: Go only, it never
// starts Python. It opens the listening sockets and keeps them for its
// whole life, runs N workers (this same binary, re-executed in the worker
// mode of package server), replaces those that die, hang or reach a
// recycling limit, and answers the operator's signals.
package supervisor

import (
	"fmt"
	"runtime"
	"time"

	"github.com/m0serve/m0serve/internal/configerr"
)

// Config is the master's configuration; Server is what every worker
// serves (and where the master listens).
type Config struct {
	Server Server
	// Args are the command-line arguments a worker is started with: the
	// master's own, so a worker parses the same configuration.
	Args []string
	// Command is the program a worker runs and the arguments before Args
	// (its argv[0] first); empty: this program again (os.Executable).
	// The extension module's master starts `python -m m0serve` with the
	// interpreter's own sys.executable, which keeps its venv.
	Command []string

	Workers           int
	Listener          string        // reuseport (one socket per worker slot) or shared
	WorkerTimeout     time.Duration // a loop heartbeat older than this: SIGKILL; 0: off
	MaxRequests       int           // per-worker requests before a recycle; 0: off
	MaxRequestsJitter int           // adds rand(0..J) to MaxRequests per worker
	MaxWorkerLifetime time.Duration // 0: off
	MaxWorkerRSS      int64         // MiB; 0: off
	RSSCheckInterval  time.Duration
	PidFile           string
	// Reload, when set, watches the app's sources and replaces the
	// workers (a rolling reload) when one changes: for development.
	Reload *Reload
	// Realtime makes --realtime's bus for the workers (bus.go);
	// PGListen, a Postgres URL, publishes its NOTIFYs there.
	Realtime bool
	PGListen string
}

// Defaults is the default Config, shared with cli's --help.
var Defaults = Config{
	Listener:         DefaultListener,
	WorkerTimeout:    30 * time.Second,
	RSSCheckInterval: time.Second,
}

// DefaultListener is reuseport where the kernel spreads connections over
// SO_REUSEPORT sockets (Linux); macOS and the BSDs share one socket.
var DefaultListener = func() string {
	if runtime.GOOS == "linux" {
		return "reuseport"
	}
	return "shared"
}()

// maxWorkers bounds --workers (and SIGTTIN).
const maxWorkers = 1024

// Validate checks the master's own flags; Run checks the server's.
func (c *Config) Validate() error {
	switch {
	case c.Workers < 1 || c.Workers > maxWorkers:
		return &configerr.Error{Flag: "workers", Reason: fmt.Sprintf("%d: want 1 to %d", c.Workers, maxWorkers)}
	case c.Listener != "reuseport" && c.Listener != "shared":
		return &configerr.Error{Flag: "listener", Reason: fmt.Sprintf("%q: want reuseport or shared", c.Listener)}
	case c.Listener == "reuseport" && runtime.GOOS != "linux":
		return &configerr.Error{Flag: "listener", Reason: "reuseport: the kernel spreads connections over SO_REUSEPORT sockets on Linux only; use shared"}
	case c.WorkerTimeout < 0:
		return &configerr.Error{Flag: "worker-timeout", Reason: "must not be negative (0: off)"}
	case c.MaxRequests < 0:
		return &configerr.Error{Flag: "max-requests", Reason: "must not be negative (0: off)"}
	case c.MaxRequestsJitter < 0:
		return &configerr.Error{Flag: "max-requests-jitter", Reason: "must not be negative"}
	case c.MaxWorkerLifetime < 0:
		return &configerr.Error{Flag: "max-worker-lifetime", Reason: "must not be negative (0: off)"}
	case c.MaxWorkerRSS < 0:
		return &configerr.Error{Flag: "max-worker-rss", Reason: "must not be negative (0: off)"}
	case c.MaxWorkerRSS > 0 && runtime.GOOS != "linux":
		return &configerr.Error{Flag: "max-worker-rss", Reason: "reads /proc/PID/statm: Linux only"}
	case c.RSSCheckInterval <= 0:
		return &configerr.Error{Flag: "rss-check-interval", Reason: "must be positive"}
	}
	return c.Server.Validate()
}

// BootError is a worker that exited before it was ready the first time
// the master started it: the app does not start, and restarting it would
// only fill the log. The command line exits with the worker's status 2
// (the app did not import, or a configuration mistake: a single process
// exits with 2 for them too), else with 3.
type BootError struct {
	Slot   int
	Pid    int
	Status string
	Code   int // the worker's exit status; -1 when a signal ended it
}

func (e *BootError) Error() string {
	return fmt.Sprintf("worker %d (pid %d) failed to boot: %s; stopped the others", e.Slot, e.Pid, e.Status)
}
