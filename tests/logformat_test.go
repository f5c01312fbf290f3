//go:build linux

package tests

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLogFormatJSON: with --log-format json every line of the master's
// and the workers' log is a JSON object with time, level, msg and pid,
// and a worker's has its slot; the line naming a failed request is an
// error, with the traceback in it; the access log's lines are objects
// too, with its fields as keys.
func TestLogFormatJSON(t *testing.T) {
	file, addr := inheritedTCP(t)
	cmd := m0serveCommand("--fd", "3", "--workers", "2", "--log-format", "json", "--access-log", "--app-dir", appsDir(t), "errors_app:app")
	cmd.ExtraFiles = append(cmd.ExtraFiles, file)
	s := startReady(t, cmd, regexp.MustCompile(`"msg":"WSGI app [^"]*serving on http://`), 2)
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/raise-before")
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	if resp.StatusCode != 500 {
		t.Errorf("status %d", resp.StatusCode)
	}
	s.stop()
	workers, errors, accessed := map[int]bool{}, 0, 0
	for _, line := range strings.Split(s.logs.String(), "\n") {
		var entry struct {
			Time, Level, Msg string
			Pid              int
			Worker           *int
			Request          string
			Status           int
			RemoteAddr       string `json:"remote_addr"`
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("not a JSON line: %q", line)
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, entry.Time); err != nil || entry.Level == "" || entry.Msg == "" || entry.Pid == 0 {
			t.Errorf("missing fields: %q", line)
		}
		if entry.Worker != nil {
			workers[*entry.Worker] = true
		}
		if entry.Level == "ERROR" && strings.HasPrefix(entry.Msg, "GET /raise-before: the WSGI application raised\nTraceback (most recent call last):\n") &&
			strings.HasSuffix(entry.Msg, "KeyError: 'm0test raised before start_response'") && *entry.Worker >= 0 {
			errors++
		}
		if entry.Request == "GET /raise-before HTTP/1.1" && entry.Status == 500 && entry.RemoteAddr == "127.0.0.1" &&
			entry.Level == "INFO" && strings.Contains(entry.Msg, `"GET /raise-before HTTP/1.1" 500 `) && entry.Worker != nil {
			accessed++
		}
	}
	if !workers[0] || !workers[1] || errors == 0 || accessed != 1 {
		t.Errorf("workers %v, error lines with the traceback %d, access lines %d:\n%s", workers, errors, accessed, s.logs)
	}
}

// TestLogLevelWarning: at --log-level warning the start and stop lines
// are left out and the app's traceback is kept.
func TestLogLevelWarning(t *testing.T) {
	file, addr := inheritedTCP(t)
	cmd := m0serveCommand("--fd", "3", "--log-level", "warning", "--app-dir", appsDir(t), "errors_app:app")
	cmd.ExtraFiles = append(cmd.ExtraFiles, file)
	// Nothing is logged at start: ready is the first answer.
	s := startReady(t, cmd, regexp.MustCompile(`^$`), 0)
	client := &http.Client{Timeout: 20 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get("http://" + addr + "/raise-before")
		if err == nil {
			readBody(t, resp)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer: %v\n%s", err, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	logs := s.logs.String()
	if strings.Contains(logs, "serving on") || strings.Contains(logs, "stopped") || !strings.Contains(logs, "m0test raised before start_response") {
		t.Errorf("log at warning:\n%s", logs)
	}
}
