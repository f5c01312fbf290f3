package supervisor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/internal/counters"
	"github.com/m0serve/m0serve/internal/workerproto"
	"golang.org/x/sys/unix"
)

// worker is one worker process as the master sees it.
type worker struct {
	slot            *slot
	pid             int
	exitCode        int            // its exit status once reaped; -1 for a signal
	proc            process        // signals it, reaps it
	control         io.WriteCloser // the master's end of the socketpair
	unmap           func()         // unmaps heartMem (nil: not mapped)
	heartbeat       *atomic.Int64
	stats           *counters.Words       // the worker's loop's counters, in heartMem
	appStats        *workerproto.AppStats // its handlers', in heartMem
	backend         string                // its loop's backend description, once told
	heartMem        []byte
	started         time.Time
	readyAt         time.Time // zero until ready
	draining        bool      // told to drain (or drains at its request limit)
	killAt          time.Time // a drain that outlives its grace is killed then
	rssHigh         int       // consecutive RSS samples over the limit
	heartbeatKilled bool
	exited          bool
	// layoutOK: its heartbeat file is of this master's layout (checked
	// at its first line); refused: it was not, and it was killed.
	layoutOK, refused bool

	// stoppedAccepting: the worker began its shutdown and will not
	// accept again (workerproto.Stopping).
	stoppedAccepting bool
	// capacity is how many requests its app serves at once (WSGI's
	// handler threads; 0: not bounded, never busy), and busy says they
	// have all been in the app for busyAfter or more (sweep).
	capacity int
	busy     bool
}

func (w *worker) String() string { return fmt.Sprintf("worker %d (pid %d)", w.slot.index, w.pid) }

func (w *worker) send(line string) {
	// A worker that is gone makes this fail; its exit is handled on its own.
	w.control.Write([]byte(line + "\n"))
}

// events a worker's goroutines report to the master's loop.
type event struct {
	w    *worker
	line string // a control line: ready or limit
	// exit: the process has ended. Not yet reaped: the master's
	// goroutine reaps it as it handles this (process.reap), so none of
	// its kills can reach another process that was given the pid.
	exit bool
	// waitErr: the waiter could not wait without reaping, and reaped.
	waitErr error
}

// process is a worker's process as the master acts on it; the state
// machine's tests (master_test.go) give it fakes.
type process interface {
	// signal sends sig, unless the process was reaped (it is gone, and
	// its pid may be another's).
	signal(sig syscall.Signal)
	// reap collects the exit status once its end was reported.
	reap() syscall.WaitStatus
}

// osProcess is a real worker process. Only the master's goroutine signals
// and reaps it; the waiter goroutine (waitExit) reports its end without
// reaping, so until reap the pid stays a zombie that no new process can
// be given.
type osProcess struct {
	pid    int
	reaped bool
	// early is the status the waiter reaped where it could not wait
	// without (waitExit): set before it reports the exit, read after.
	early *syscall.WaitStatus
}

func (p *osProcess) signal(sig syscall.Signal) {
	if !p.reaped {
		syscall.Kill(p.pid, sig)
	}
}

func (p *osProcess) reap() syscall.WaitStatus {
	p.reaped = true
	if p.early != nil {
		return *p.early
	}
	return reapNow(p.pid)
}

// reapNow waits for pid to end and reaps it.
func reapNow(pid int) syscall.WaitStatus {
	var status syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &status, 0, nil)
		if err != syscall.EINTR {
			return status
		}
	}
}

// spawner starts processes from one OS thread that never exits: a child's
// death signal (Pdeathsig) fires when the thread that forked it ends, not
// the process (golang/go #27505), so the forking thread must live as long
// as the master.
type spawner chan func()

func newSpawner() spawner {
	s := make(spawner)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the process
		for f := range s {
			f()
		}
	}()
	return s
}

func (s spawner) start(exe string, argv, env []string, files []uintptr) (int, error) {
	type result struct {
		pid int
		err error
	}
	done := make(chan result)
	s <- func() {
		// syscall.StartProcess, not os/exec: exec.Cmd.ExtraFiles goes
		// through os.File.Fd, which makes the listener blocking for every
		// process sharing it (O_NONBLOCK belongs to the open file).
		pid, err := syscall.ForkExec(exe, argv, &syscall.ProcAttr{Env: env, Files: files, Sys: workerProcAttr()})
		done <- result{pid, err}
	}
	r := <-done
	return r.pid, r.err
}

// spawn starts a worker for slot; it reports on events.
func (m *master) spawn(s *slot) (*worker, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, fmt.Errorf("control socketpair: %w", err)
	}
	unix.CloseOnExec(pair[0])
	unix.CloseOnExec(pair[1])
	heart, err := heartbeatFile()
	if err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return nil, fmt.Errorf("heartbeat file: %w", err)
	}
	defer heart.Close()
	defer unix.Close(pair[1])
	fail := func(err error) (*worker, error) {
		unix.Close(pair[0])
		return nil, err
	}
	if err := heart.Truncate(int64(workerproto.HeartbeatSize)); err != nil {
		return fail(fmt.Errorf("heartbeat file: %w", err))
	}
	mem, err := unix.Mmap(int(heart.Fd()), 0, workerproto.HeartbeatSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail(fmt.Errorf("heartbeat mapping: %w", err))
	}
	limit := m.cfg.MaxRequests
	if limit > 0 && m.cfg.MaxRequestsJitter > 0 {
		limit += m.rand.IntN(m.cfg.MaxRequestsJitter + 1)
	}
	env := append(os.Environ(),
		workerproto.SlotEnv+"="+strconv.Itoa(s.index),
		workerproto.MaxRequestsEnv+"="+strconv.Itoa(limit))
	files := []uintptr{0, 1, 2, uintptr(s.listenFD), uintptr(pair[1]), heart.Fd()}
	// The handoff's descriptors first: their numbers are fixed
	// (workerproto.HandoffBoardFD on); the bus says where its are.
	handoff, handoffEnv := m.handoffFiles(s)
	files = append(files, handoff...)
	env = append(env, handoffEnv...)
	files, env = m.busFiles(s.index, files, env)
	pid, err := m.spawner.start(m.command[0], append(m.command[1:len(m.command):len(m.command)], m.cfg.Args...), env, files)
	if err != nil {
		unix.Munmap(mem)
		return fail(fmt.Errorf("starting a worker: %w", err))
	}
	control := os.NewFile(uintptr(pair[0]), "control")
	proc := &osProcess{pid: pid}
	w := &worker{
		exitCode:  -1,
		slot:      s,
		pid:       pid,
		proc:      proc,
		control:   control,
		unmap:     func() { unix.Munmap(mem) },
		heartbeat: workerproto.Stamp(mem),
		stats:     workerproto.LoopWords(mem),
		appStats:  workerproto.AppStatsIn(mem),
		heartMem:  mem,
		started:   time.Now(),
	}
	go func() {
		lines := bufio.NewScanner(control)
		for lines.Scan() {
			m.events <- event{w: w, line: lines.Text()}
		}
	}()
	go func() {
		var err error
		proc.early, err = waitExit(pid)
		m.events <- event{w: w, exit: true, waitErr: err}
	}()
	return w, nil
}

func describeExit(status syscall.WaitStatus) string {
	switch {
	case status.Signaled():
		return "killed by signal " + strconv.Itoa(int(status.Signal())) + " (" + status.Signal().String() + ")"
	case status.Exited():
		return "exit status " + strconv.Itoa(status.ExitStatus())
	}
	return fmt.Sprintf("wait status %#x", uint32(status))
}

// release frees what the master held for an ended worker.
func (w *worker) release() {
	w.exited = true
	w.control.Close()
	if w.unmap != nil {
		w.unmap()
	}
	w.heartbeat = nil
}

// workers is "1 worker", "2 workers".
func workers(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}

// workerSlots is "1 worker (slot 0)", "4 workers (slots 0-3)".
func workerSlots(n int) string {
	if n == 1 {
		return "1 worker (slot 0)"
	}
	return fmt.Sprintf("%d workers (slots 0-%d)", n, n-1)
}
