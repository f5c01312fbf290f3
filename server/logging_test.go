package server

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestLogfLevels(t *testing.T) {
	var out bytes.Buffer
	logf, err := NewLogf(&out, "text", "warning", 3)
	if err != nil {
		t.Fatal(err)
	}
	logf("m0serve: serving on %s", "x")
	logf("m0serve: debug: detail")
	logf("m0serve: warning: careful")
	logf("Traceback (most recent call last):")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// The level in brackets after the time stamp; a line without the
	// prefix is Python's, an error.
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " [WARNING] m0serve: worker 3 (pid "+strconv.Itoa(os.Getpid())+"): careful") ||
		!strings.HasSuffix(lines[1], " [ERROR] Traceback (most recent call last):") {
		t.Errorf("got:\n%s", out.String())
	}
	for _, bad := range [][2]string{{"text", "loud"}, {"xml", "info"}} {
		if _, err := NewLogf(&out, bad[0], bad[1], -1); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestLogfJSON(t *testing.T) {
	var out bytes.Buffer
	logf, err := NewLogf(&out, "json", "trace", 1)
	if err != nil {
		t.Fatal(err)
	}
	logf("m0serve: serving on %s", "x")
	logf("m0serve: trace: fine")
	logf("m0serve: critical: gone")
	var levels []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var entry struct {
			Time, Level, Msg string
			Pid, Worker      int
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil || entry.Time == "" || entry.Pid != os.Getpid() || entry.Worker != 1 {
			t.Fatalf("%q: %+v %v", line, entry, err)
		}
		levels = append(levels, entry.Level+" "+entry.Msg)
	}
	if got := strings.Join(levels, "|"); got != "INFO serving on x|TRACE fine|CRITICAL gone" {
		t.Errorf("got %s", got)
	}
}

// TestLogfTextLevels: every text line names its level, as gunicorn does.
func TestLogfTextLevels(t *testing.T) {
	var out bytes.Buffer
	logf, err := NewLogf(&out, "text", "trace", -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"trace: ", "debug: ", "", "warning: ", "error: ", "critical: "} {
		logf("m0serve: " + word + "a line")
	}
	want := []string{"[TRACE]", "[DEBUG]", "[INFO]", "[WARNING]", "[ERROR]", "[CRITICAL]"}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got:\n%s", out.String())
	}
	for i, line := range lines {
		if !strings.HasSuffix(line, " "+want[i]+" m0serve: a line") {
			t.Errorf("line %d: %q, want %s m0serve: a line", i, line, want[i])
		}
	}
}

// TestIdleFlags: the flags given that an app of the other interface
// would use, named for the warning.
func TestIdleFlags(t *testing.T) {
	given := map[string]bool{"threads": true, "loop": true, "lifespan": true, "port": true}
	if got := idleFlags(given, true); got != "--threads" {
		t.Errorf("ASGI: %q", got)
	}
	if got := idleFlags(given, false); got != "--loop and --lifespan" {
		t.Errorf("WSGI: %q", got)
	}
	given["asgi-thread"] = true
	if got := idleFlags(given, false); got != "--loop, --lifespan and --asgi-thread" {
		t.Errorf("WSGI: %q", got)
	}
	if got := idleFlags(map[string]bool{"port": true}, false); got != "" {
		t.Errorf("none: %q", got)
	}
}
