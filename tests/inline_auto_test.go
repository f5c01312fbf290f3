//go:build linux

package tests

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestInlineAutoSlowRequest: with --wsgi-inline auto, once the app has
// been quick long enough to run on the I/O thread, a request that turns
// slow (5 s of CPU) holds the loop: it still completes, the worker's
// heartbeat is kept meanwhile (a 2 s --worker-timeout does not kill the
// worker, as for a long call on a handler thread), and the I/O thread's
// share is turned off for the worker's life, said once in the log.
func TestInlineAutoSlowRequest(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), []string{"M0_WSGI_INLINE=auto"}, "--workers", "1", "--worker-timeout", "2")
	client := &http.Client{Timeout: 30 * time.Second}
	for i := 0; i < 100; i++ {
		if status, _, err := fetch(client, s.url("/pid")); err != nil || status != 200 {
			t.Fatalf("quick request %d: %d %v", i, status, err)
		}
	}
	if status, body, err := fetch(client, s.url("/spin?s=5")); err != nil || status != 200 || body != "spun" {
		t.Fatalf("a 5 s CPU-bound request: %d %q %v\n%s", status, body, err, s.logs)
	}
	s.waitLog(t, `on the I/O thread: WSGI requests go to the handler threads from now on`, 1, 10*time.Second)
	if logs := s.logs.String(); strings.Contains(logs, "has not turned") {
		t.Fatalf("a long call on the I/O thread tripped the worker timeout:\n%s", logs)
	}
	if status, _, err := fetch(client, s.url("/pid")); err != nil || status != 200 {
		t.Fatalf("after: %d %v", status, err)
	}
}
