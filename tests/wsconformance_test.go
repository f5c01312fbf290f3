//go:build linux

package tests

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// TestWebSocketConformance runs the conformance client's cases
// (wsconformance_cases_test.go) against an echo on both of m0serve's
// backends, --native ws-echo and an ASGI app, and against tests/.venv's
// uvicorn with its websockets and wsproto implementations, which checks
// the client: where uvicorn legitimately differs, uvicornDiffers says so.
func TestWebSocketConformance(t *testing.T) {
	t.Run("vectors", func(t *testing.T) {
		for _, v := range utf8Vectors() {
			if utf8.ValidString(v.payload) != v.valid {
				t.Errorf("%s %q: the table says valid=%v", v.group, v.payload, v.valid)
			}
		}
	})
	maxSize := strconv.Itoa(confMaxSize)
	// The servers run side by side: most of a case's time is waiting.
	// m0serve runs on io_uring and on epoll, whose reads split frames
	// differently.
	for _, v := range variants[:2] {
		t.Run("m0serve native "+v.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, v, "--native", "ws-echo", "--ws-max-size", maxSize)
			runConformance(t, s.addr, nil)
		})
		t.Run("m0serve ASGI "+v.name, func(t *testing.T) {
			t.Parallel()
			s := startASGI(t, v, "asgi_ws_echo_app:app", "--ws-max-size", maxSize)
			runConformance(t, s.addr, nil)
		})
	}
	for _, impl := range []string{"websockets", "wsproto"} {
		t.Run("uvicorn "+impl, func(t *testing.T) {
			t.Parallel()
			runConformance(t, startUvicorn(t, "--ws", impl, "--ws-max-size", maxSize), uvicornDiffers[impl])
		})
	}
}

// uvicornDiffers: the cases where uvicorn 0.54 (tests/.venv) does something
// else than RFC 6455 prefers, per implementation, and why. Each is a
// behaviour Autobahn grades NON-STRICT or INFORMATIONAL, or a limit of the
// implementation, not an error of the client.
var uvicornDiffers = map[string]map[string]string{
	"websockets": {
		"6.4.3": "websockets reads a whole frame before it checks its UTF-8: a bad byte mid-frame fails the connection when the frame ends, not at once (Autobahn: NON-STRICT)",
		"6.4.4": "as 6.4.3",
	},
	"wsproto": {
		"7.7.12": "wsproto 1.3 drops the connection on close code 1014 (bad gateway), registered with IANA after its table was written",
		"9.9.1":  "uvicorn 0.54's wsproto implementation lets a frame one byte over --ws-max-size through (0.17 applied no limit at all)",
		"13.10":  "wsproto accepts a permessage-deflate offer with a parameter RFC 7692 does not define; §5.1 says to decline it",
		"13.13":  "wsproto accepts server_no_context_takeover with a value; RFC 7692 §7.1.1.1 says to decline it",
		"13.14":  "wsproto accepts a repeated parameter; RFC 7692 §7 says to decline it",
	},
}

// confResult is one case's outcome.
type confResult struct {
	c       confCase
	err     error
	notes   []string
	elapsed time.Duration
}

// runConformance runs every case against the echo at addr, four at a
// time, and fails the test for each case that fails, except those in
// differs (which it reports).
func runConformance(t *testing.T, addr string, differs map[string]string) {
	cases := confCases()
	results := make([]confResult, len(cases))
	inParallel(len(cases), 4, func(i int) {
		began := time.Now()
		results[i] = runConfCase(addr, cases[i])
		results[i].elapsed = time.Since(began)
	})

	passed, nonStrict, known := 0, 0, 0
	var lines []string
	slowest := results[0]
	for _, r := range results {
		if r.elapsed > slowest.elapsed {
			slowest = r
		}
		_, differs := differs[r.c.id]
		switch {
		case r.err == nil && len(r.notes) == 0:
			passed++
		case r.err == nil:
			passed++
			nonStrict++
			lines = append(lines, fmt.Sprintf("%s (%s): non-strict: %s", r.c.id, r.c.about, strings.Join(r.notes, "; ")))
		case differs:
			known++
			t.Logf("%s (%s): differs as documented: %v", r.c.id, r.c.about, r.err)
		default:
			t.Errorf("%s (%s): %v", r.c.id, r.c.about, r.err)
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("%s: %d of %d cases passed (%d of them non-strict), %d differ as documented; the slowest, %s, took %v",
		t.Name(), passed, len(cases), nonStrict, known, slowest.c.id, slowest.elapsed.Round(time.Millisecond))
}

// runConfCase runs one case on a connection of its own and, if the case
// left it open, closes it with 1000, which the server must echo.
func runConfCase(addr string, cc confCase) confResult {
	c, err := confDial(addr, "/", cc.offer)
	if err != nil {
		return confResult{c: cc, err: err}
	}
	defer c.conn.Close()
	err = cc.run(c)
	if err == nil && !c.closed {
		if err = c.closeHandshake(1000, ""); err != nil {
			err = fmt.Errorf("closing after the case: %w", err)
		}
	}
	return confResult{c: cc, err: err, notes: c.notes}
}

// startUvicorn runs tests/.venv's uvicorn with the ASGI echo app on a
// socket the test bound, so no port is guessed, and returns its address.
func startUvicorn(t *testing.T, args ...string) string {
	t.Helper()
	python := venvPython(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	file, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	argv := append([]string{"-m", "uvicorn", "--fd", "3", "--app-dir", appsDir(t), "--log-level", "warning"}, args...)
	cmd := exec.Command(python, append(argv, "asgi_ws_echo_app:app")...)
	cmd.ExtraFiles = []*os.File{file}
	cmd.Env = cleanEnv()
	logs := &logBuffer{}
	cmd.Stdout, cmd.Stderr = logWriter{logs}, logWriter{logs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("uvicorn's output:\n%s", logs)
		}
	})
	addr := ln.Addr().String()
	// The socket is listening already: a handshake waits in its backlog
	// until uvicorn has started.
	c, err := confDial(addr, "/", "")
	if err != nil {
		t.Fatalf("uvicorn did not answer: %v\n%s", err, logs)
	}
	if err := c.closeHandshake(1000, ""); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatalf("uvicorn's first close handshake: %v", err)
	}
	c.conn.Close()
	return addr
}

// inParallel calls do(i) for every i below n, from workers goroutines,
// and returns when all have returned.
func inParallel(n, workers int, do func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				do(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
