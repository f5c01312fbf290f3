package supervisor

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
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
