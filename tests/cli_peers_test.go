//go:build linux

package tests

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGunicornAddressFlags: gunicorn's -b HOST:PORT, -b unix:PATH and
// -w N serve as --host/--port, --uds and --workers do.
func TestGunicornAddressFlags(t *testing.T) {
	s := startReady(t, m0serveCommand("-b", "127.0.0.1:0", "--native", "hello"), servingLine, 1)
	addr := servingLine.FindStringSubmatch(s.logs.String())[1]
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) == 0 {
		t.Errorf("-b HOST:PORT: %d %q", resp.StatusCode, body)
	}
	s.stop()

	path := filepath.Join(t.TempDir(), "m0.sock")
	s = startReady(t, m0serveCommand("-w", "2", "-b", "unix:"+path, "--native", "hello"),
		regexp.MustCompile(`serving on unix:`+regexp.QuoteMeta(path)), 2)
	resp, err = unixClient(path).Get("http://m0serve/")
	if err != nil {
		t.Fatalf("%v\n%s", err, s.logs)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(s.logs.String(), "2 workers (slots 0-1)") {
		t.Errorf("-w 2 -b unix:PATH: %d\n%s", resp.StatusCode, s.logs)
	}
	s.stop()
}

// TestHelpGroupedWithPlaceholders: --help groups the flags by concern,
// says what each takes, and has -h, -V, -w and -b.
func TestHelpGroupedWithPlaceholders(t *testing.T) {
	status, out := runToExit(t, cleanEnv(), "-h")
	if status != 0 {
		t.Fatalf("-h: status %d\n%s", status, out)
	}
	order := []string{"\nGeneral:\n  -h, --help\n", "\n  -V, --version\n", "\nServer:\n  -b, --bind HOST:PORT\n",
		"\nApplication:\n", "\nWorkers:\n  -w, --workers N (env M0_WORKERS)\n", "\nTimeouts and limits:\n",
		"\nLogging:\n", "\n  --access-log-file FILE (env M0_ACCESS_LOG_FILE)\n", "\nStatic files:\n", "\nMetrics:\n", "\nWebSocket:\n"}
	at := 0
	for _, want := range order {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("--help lacks %q after byte %d:\n%s", want, at, out)
		}
		at += i
	}
	status, version := runToExit(t, cleanEnv(), "-V")
	if status != 0 || !strings.HasPrefix(version, "m0serve ") {
		t.Errorf("-V: %d %q", status, version)
	}
}

// TestPeerFlagPointers: a uvicorn or gunicorn flag m0serve does not have
// is one line pointing to the one it has, exit 2.
func TestPeerFlagPointers(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "30"}, "m0serve: unknown flag --timeout; gunicorn's --timeout is --worker-timeout (a worker whose loop stopped) or --request-timeout (a request stuck in the app) (see --help)"},
		{[]string{"--host", "0.0.0.0:8000"}, "m0serve: --host 0.0.0.0:8000: the port goes in --port: --host 0.0.0.0 --port 8000 (or -b 0.0.0.0:8000)"},
		{[]string{"--worker-class", "uvicorn.workers.UvicornWorker"}, "m0serve: unknown flag --worker-class; no worker class to choose"},
		{[]string{"--access-logfile", "-"}, "m0serve: unknown flag --access-logfile; use --access-log-file FILE"},
		{[]string{"--use-colors"}, "m0serve: unknown flag --use-colors; no colours"},
	} {
		status, out := runToExit(t, cleanEnv(), append(tc.args, "--native", "hello")...)
		if status != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%q: status %d, %q; want 2 and one line with %q", tc.args, status, out, tc.want)
		}
	}
}
