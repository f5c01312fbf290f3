//go:build linux

package tests

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitLines waits for the file to hold n lines and returns them.
func waitLines(t *testing.T, path string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		lines := strings.Fields(string(data))
		if len(lines) >= n || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLimitConcurrency: with two requests in flight on two connections,
// a third is answered 503 by the loop (the app never sees it) and its
// connection closed; once they are done, requests are served again.
func TestLimitConcurrency(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	s := start(t, wsgiVariant("GATE_FILE="+gate), "--app-dir", appsDir(t),
		"--limit-concurrency", "2", "--threads", "4", "--access-log", "gate_app:app")
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	held := make(chan string, 2)
	// One at a time: a handler thread takes what is queued in one batch.
	for i, q := range []string{"a", "b"} {
		go func() {
			status, body, err := fetch(client, s.url("/hold?"+q))
			if err != nil {
				held <- err.Error()
				return
			}
			held <- fmt.Sprintf("%d %s", status, body)
		}()
		if lines := waitLines(t, gate+".log", i+1); len(lines) != i+1 {
			t.Fatalf("the app saw %q, want %d holds\n%s", lines, i+1, s.logs)
		}
	}

	resp, err := client.Get(s.url("/hold?c"))
	if err != nil {
		t.Fatalf("third request: %v\n%s", err, s.logs)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !resp.Close {
		t.Errorf("third request: %d (close %v) %q, want 503 and the connection closed", resp.StatusCode, resp.Close, body)
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if got := <-held; got != "200 ok" {
			t.Errorf("held request: %s", got)
		}
	}
	// The held connections close as their responses end; until the loop
	// has seen them go, a request may still be one too many.
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, err := fetch(client, s.url("/after"))
		if err == nil && status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the holds: %d %v\n%s", status, err, s.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	lines := waitLines(t, gate+".log", 3)
	if strings.Contains(strings.Join(lines, " "), "/hold?c") {
		t.Errorf("the refused request reached the app: %q", lines)
	}
	s.stop()
	if !strings.Contains(s.logs.String(), `"GET /hold?c HTTP/1.1" 503 `) {
		t.Errorf("no access-log line for the 503:\n%s", s.logs)
	}
	if !strings.Contains(s.logs.String(), "beyond --limit-concurrency 2, answered 503") {
		t.Errorf("no log line for the refusal:\n%s", s.logs)
	}
}

// TestLimitConcurrencyIdle: ten TCP connections that never send a
// request do not count against --limit-concurrency 5; real requests
// beside them are served (uvicorn answers them 503).
func TestLimitConcurrencyIdle(t *testing.T) {
	for _, v := range variants[:2] {
		t.Run(v.name, func(t *testing.T) {
			s := start(t, v, "--app-dir", appsDir(t), "--limit-concurrency", "5", "reliability_app:wsgi")
			for i := 0; i < 10; i++ {
				c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
			}
			client := &http.Client{Timeout: 20 * time.Second}
			for i := 0; i < 5; i++ {
				status, body, err := fetch(client, s.url("/host"))
				if err != nil || status != 200 {
					t.Fatalf("request %d beside 10 idle connections: %d %q %v\n%s", i, status, body, err, s.logs)
				}
			}
		})
	}
}
