//go:build linux

package tests

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

// seedServing is the Mojo m0serve's line per worker once it serves.
var seedServing = regexp.MustCompile(`m0serve: \S+ on http://[0-9.]+:([0-9]+) \(protocol=`)

// TestSeedRealtime runs the realtime clients against the Mojo m0serve
// (M0_SEED: its wheel's m0serve command), so the README's table of where
// the two differ stays true: make test-seed, not make test (the seed is
// another project's wheel). Not the ASGI case: the seed refuses
// --realtime for an ASGI app.
func TestSeedRealtime(t *testing.T) {
	seed := os.Getenv("M0_SEED")
	if seed == "" {
		t.Skip("M0_SEED names the Mojo m0serve's m0serve command: make test-seed")
	}
	serveSeed := func(t *testing.T, target string, env []string, args ...string) *workersServer {
		t.Helper()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		workers := 1
		for i, a := range args {
			if a == "--workers" && i+1 < len(args) {
				workers, _ = strconv.Atoi(args[i+1])
			}
		}
		argv := append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--app-dir", appsDir(t), "--realtime"}, args...)
		if target != "" { // "": the args mount the apps
			argv = append(argv, target)
		}
		// Its lines go to stdout: to stderr here, where launch reads.
		cmd := exec.Command("/bin/sh", append([]string{"-c", `exec "$0" "$@" 1>&2`, seed}, argv...)...)
		cmd.Env = append(cleanEnv(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		s, _ := launch(t, cmd, "the Mojo m0serve", seedServing, workers)
		s.addr = "127.0.0.1:" + strconv.Itoa(port)
		return &workersServer{server: s, master: cmd.Process.Pid}
	}
	for name, test := range map[string]func(*testing.T, realtimeServer){
		"HoldAndPublishAcrossWorkers": realtimeHoldAndPublishAcrossWorkers,
		"ReplayAndGap":                realtimeReplayAndGap,
		"ShutdownClosesHolds":         realtimeShutdownClosesHolds,
		"Heartbeat":                   realtimeHeartbeat,
		"ChildProcessPublishes":       realtimeChildProcessPublishes,
		"WebSocketHold":               realtimeWebSocketHold,
		"GrantHoldMount":              realtimeGrantHoldMount,
		"GrantPreviousKey":            realtimeGrantPreviousKey,
	} {
		t.Run(name, func(t *testing.T) { test(t, serveSeed) })
	}
}
