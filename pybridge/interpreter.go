package pybridge

/*
#cgo pkg-config: python3-embed
#cgo CFLAGS: -Wall -Wextra -Werror -O2
#include "shim.h"
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/m0serve/m0serve/http1"
)

// Config says where the interpreter finds the application and its
// packages.
type Config struct {
	// AppDir goes first on sys.path (the directory the app module is
	// imported from); empty means the current directory.
	AppDir string
	// VirtualEnv is a venv to run in, as its own python would: it is
	// sys.prefix, and its site-packages (with its .pth files) are on
	// sys.path. Empty means $VIRTUAL_ENV, if set. The venv must have been
	// made for the Python this binary embeds.
	VirtualEnv string
	// SitePackages are further site directories, added the same way.
	SitePackages []string
}

// Interpreter is the process's one embedded CPython. It is started on a
// thread of its own, which also finalises it: CPython expects Py_FinalizeEx
// on the thread that initialised it.
type Interpreter struct {
	stop     chan struct{}
	finished chan int

	mu       sync.Mutex
	apps     []*App
	handlers int // handler groups not yet ended
	closed   bool
	// maxClientWaits: the spare threads of the next handler group
	// (SetMaxClientWaits).
	maxClientWaits int
}

// started is set by the first Start: CPython cannot be initialised again
// reliably after Py_FinalizeEx (extension modules keep static state).
var started atomic.Bool

// hosted is set by Host: the interpreter is the one this process already
// runs (m0serve imported as an extension module), not one to start.
var hosted atomic.Bool

// Host makes Start adopt the interpreter this process already runs
// instead of initialising one: the extension module's entry calls it
// before anything starts. The caller's thread has released the GIL.
// Config.VirtualEnv must then be empty: the environment is the host's.
func Host() { hosted.Store(true) }

// Hosted says whether Host was called.
func Hosted() bool { return hosted.Load() }

// Version is the embedded Python's version, as "3.11".
func Version() string {
	return fmt.Sprintf("%d.%d", int(C.PY_MAJOR_VERSION), int(C.PY_MINOR_VERSION))
}

// Start initialises the interpreter, or after Host adopts the running
// one (its thread takes a thread state of its own). Python installs no
// signal handlers (signals stay the Go runtime's; a host's are taken back
// by the server's signal.Notify) and SIGPIPE is ignored, so a write to a
// closed socket or pipe from Python returns EPIPE instead of ending the
// process.
func Start(cfg Config) (*Interpreter, error) {
	if err := checkLayout(); err != nil {
		return nil, err
	}
	appDir := cfg.AppDir
	if appDir == "" {
		appDir = "."
	}
	appDir, err := filepath.Abs(appDir)
	if err != nil {
		return nil, fmt.Errorf("pybridge: app dir: %w", err)
	}
	var home home
	executable := ""
	if hosted.Load() {
		if cfg.VirtualEnv != "" {
			return nil, fmt.Errorf("pybridge: a virtualenv (%s) cannot be chosen inside a running interpreter: it already has its own", cfg.VirtualEnv)
		}
	} else {
		venv, err := virtualEnv(cfg)
		if err != nil {
			return nil, err
		}
		home = findHome()
		executable = home.executable
		if venv != "" {
			// site.py finds pyvenv.cfg beside sys.executable and makes the
			// venv sys.prefix, with its site-packages (and the system's when
			// the venv includes them), as activation does.
			executable = filepath.Join(venv, "bin", "python")
		}
		if os.Getenv("PYTHONHOME") != "" {
			home.prefix = "" // the user's choice, which CPython reads
		}
	}
	if !started.CompareAndSwap(false, true) {
		return nil, errors.New("pybridge: the interpreter was already started in this process")
	}
	signal.Ignore(syscall.SIGPIPE)

	ip := &Interpreter{stop: make(chan struct{}), finished: make(chan int, 1)}
	initErr := make(chan error, 1)
	go func() {
		// Never unlocked: the thread holds the main thread state until
		// the interpreter ends.
		runtime.LockOSThread()
		cdir := C.CString(appDir)
		csites := C.CString(strings.Join(cfg.SitePackages, "\n"))
		chome := C.CString(home.prefix)
		cexecutable := C.CString(executable)
		var cerr *C.char
		if hosted.Load() {
			cerr = C.m0_adopt(cdir, csites)
		} else {
			cerr = C.m0_init(cdir, csites, chome, cexecutable)
		}
		for _, p := range []*C.char{cdir, csites, chome, cexecutable} {
			C.free(unsafe.Pointer(p))
		}
		if cerr != nil {
			initErr <- fmt.Errorf("pybridge: starting Python %s:\n%s", Version(), takeText(cerr))
			C.m0_finalize()
			return
		}
		initErr <- nil
		<-ip.stop
		ip.finished <- int(C.m0_finalize())
	}()
	if err := <-initErr; err != nil {
		return nil, err
	}
	return ip, nil
}

// checkLayout: the request's fields cross to C as the http1 slice itself,
// so http1.Field and m0_field must agree byte for byte.
func checkLayout() error {
	var f http1.Field
	var c C.m0_field
	if unsafe.Sizeof(f) != unsafe.Sizeof(c) ||
		unsafe.Offsetof(f.Value) != unsafe.Offsetof(c.value) ||
		unsafe.Offsetof(f.Known) != unsafe.Offsetof(c.known) ||
		unsafe.Sizeof(http1.Span{}) != unsafe.Sizeof(C.m0_span{}) {
		return errors.New("pybridge: http1.Field no longer matches m0_field in shim.h; update the C struct")
	}
	if Complete != C.M0_COMPLETE || Streamed != C.M0_STREAMED || Aborted != C.M0_ABORTED ||
		Upgraded != C.M0_UPGRADED || Suspended != C.M0_SUSPENDED {
		return errors.New("pybridge: the Outcome values no longer match shim.h")
	}
	return nil
}

// takeText turns malloc'd C text into a Go string and frees it.
func takeText(c *C.char) string {
	s := C.GoString(c)
	C.free(unsafe.Pointer(c))
	return strings.TrimRight(s, "\n")
}

// Close ends the interpreter after every handler group has ended. Apps are
// released first, so their objects' finalisers run while Python still
// works.
func (ip *Interpreter) Close() error {
	ip.mu.Lock()
	if ip.closed {
		ip.mu.Unlock()
		return errors.New("pybridge: interpreter already closed")
	}
	if ip.handlers > 0 {
		ip.mu.Unlock()
		return fmt.Errorf("pybridge: %d handler groups still running; close their job sources and Wait first", ip.handlers)
	}
	ip.closed = true
	apps := ip.apps
	ip.apps = nil
	ip.mu.Unlock()
	for _, a := range apps {
		C.m0_app_free(a.c)
		a.c = nil
	}
	close(ip.stop)
	if rc := <-ip.finished; rc != 0 {
		return fmt.Errorf("pybridge: Py_FinalizeEx failed (%d): an exception during shutdown was printed", rc)
	}
	return nil
}
