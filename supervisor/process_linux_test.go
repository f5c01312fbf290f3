package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestResidentBytes(t *testing.T) {
	ballast := make([]byte, 64<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	rss, err := residentBytes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 64<<20 {
		t.Errorf("resident %d bytes with 64 MiB touched", rss)
	}
	runtime.KeepAlive(ballast)
}

// The heartbeat file lives in memory: no TMPDIR is needed, none is
// written (issue 25 item 2: a read-only root made the master exit).
func TestHeartbeatFileInMemory(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "absent"))
	f, err := heartbeatFile()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(target, "/memfd:m0serve-heartbeat") {
		t.Errorf("the heartbeat file is %q, want a memfd", target)
	}
}

// A worker's end is reported to the master without reaping it: until the
// master's goroutine reaps it, the pid is this master's zombie, so a kill
// sent meanwhile (a drain past its grace, a heartbeat timeout, a stop)
// cannot reach another process the kernel gave the pid to (issue 29
// item 9: the waiter reaped, then a 64-slot channel stood between it and
// the kills).
func TestExitReportedUnreaped(t *testing.T) {
	truePath := "/bin/true"
	pid, err := syscall.ForkExec(truePath, []string{"true"}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	reported := make(chan error, 1)
	go func() {
		reaped, err := waitExit(pid)
		if reaped != nil {
			err = fmt.Errorf("reaped by the waiter: %v", err)
		}
		reported <- err
	}()
	select {
	case err := <-reported:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit reported")
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("reported and already reaped (its pid free for another process): %v", err)
	}
	if fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(fields) == 0 || fields[0] != "Z" {
		t.Fatalf("reported, not a zombie: %q", stat)
	}
	p := &osProcess{pid: pid}
	p.signal(syscall.SIGKILL) // to our zombie: nothing happens
	if status := p.reap(); !status.Exited() || status.ExitStatus() != 0 {
		t.Fatalf("reaped %s", describeExit(status))
	}
	if !p.reaped {
		t.Fatal("not marked reaped: a later kill would be sent to the pid")
	}
}
