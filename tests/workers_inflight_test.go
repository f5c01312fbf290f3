//go:build linux

package tests

import (
	"testing"
	"time"
)

// TestWorkersCrashNamesRequest: when a worker dies in the app (os._exit,
// a segfault), the master's line about it names the request that was in
// flight, read from the worker's heartbeat file; with --threads 0 too,
// where the loop thread runs the app.
func TestWorkersCrashNamesRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"threads", nil},
		{"inline", []string{"--threads", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--workers", "1"}, tc.args...)
			s := startWorkers(t, workersAppDir(t, "v1"), nil, args...)
			for i, how := range []string{"exit", "segv"} {
				if status, _, err := fetch(oneShot(), s.url("/crash?how="+how)); err == nil {
					t.Fatalf("/crash?how=%s answered %d", how, status)
				}
				s.waitLog(t, `died: exit status [12]; in flight: "GET /crash\?how=`+how+`" for [0-9.]+m?s`, 1, 20*time.Second)
				s.waitLog(t, `: ready in`, 2+i, 20*time.Second)
			}
			// A worker that served and went idle names nothing.
			if status, _, err := fetch(oneShot(), s.url("/pid")); err != nil || status != 200 {
				t.Fatalf("/pid after the crashes: %d %v", status, err)
			}
		})
	}
}
