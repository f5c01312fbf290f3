//go:build linux

package tests

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ioUringEnter is io_uring_enter(2)'s number, the same on every Linux
// architecture.
const ioUringEnter = "426"

// TestASGIThread: --asgi-thread loop runs the app on the I/O thread (on
// io_uring, the thread that idles in io_uring_enter), executor on another;
// either way the event loop's timers, its self-pipe (run_in_executor) and
// its own sockets work.
func TestASGIThread(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		for _, mode := range []string{"loop", "executor"} {
			t.Run(mode, func(t *testing.T) {
				s := startASGI(t, v, "asgi_thread_app:app", "--asgi-thread", mode)
				_, port, _ := strings.Cut(s.addr, ":")
				for path, want := range map[string]string{
					"/sleep":           "slept",
					"/executor":        "42",
					"/connect?" + port: "HTTP/1.1 200 OK",
				} {
					if resp, body := get(t, s.url(path)); resp.StatusCode != 200 || body != want {
						t.Fatalf("%s: %d %q, want %q\n%s", path, resp.StatusCode, body, want, s.logs)
					}
				}
				_, tid := get(t, s.url("/thread"))
				if _, err := strconv.Atoi(tid); err != nil {
					t.Fatalf("/thread: %q", tid)
				}
				if v.name != "uring" {
					return
				}
				idle := idleSyscall(t, s.cmd.Process.Pid, tid)
				if onLoop := idle == ioUringEnter; onLoop != (mode == "loop") {
					t.Fatalf("the app's thread %s idles in syscall %s: on the I/O thread %v, want %v", tid, idle, onLoop, mode == "loop")
				}
			})
		}
	})
}

// idleSyscall is the number of the syscall thread tid of pid blocks in
// once the server is idle. The limit only bounds a failing test.
func idleSyscall(t *testing.T, pid int, tid string) string {
	t.Helper()
	path := "/proc/" + strconv.Itoa(pid) + "/task/" + tid + "/syscall"
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		last = strings.TrimSpace(string(data))
		number, _, _ := strings.Cut(last, " ")
		if number != "running" && number != "-1" && number != "" {
			return number
		}
	}
	t.Fatalf("%s: still %q", path, last)
	return ""
}
