//go:build linux

package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// accessLine is one Common Log Format line from 127.0.0.1.
func accessLine(request string, status string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "` +
		regexp.QuoteMeta(request) + `" ` + status + ` (\d+|-)$`)
}

// TestAccessLogLoopResponses: the responses the loop answers itself (a
// malformed request, a head over the limit, a body over the limit) appear
// in the access log as the app's responses do.
func TestAccessLogLoopResponses(t *testing.T) {
	s := startWSGI(t, "stuck_app:app", "--access-log", "--max-head-size", "1024", "--max-body-size", "16")
	if resp, _ := get(t, s.url("/ok")); resp.StatusCode != 200 {
		t.Fatalf("/ok: %d", resp.StatusCode)
	}
	exchanges := []struct{ name, request, status string }{
		{"malformed", "NOT A REQUEST\r\n\r\n", "400"},
		{"head over the limit", "GET /big HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2000) + "\r\n\r\n", "431"},
		{"body over the limit", "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", "413"},
	}
	for _, e := range exchanges {
		out, _ := rawExchange(t, s.addr, e.request, 10*time.Second)
		if !strings.HasPrefix(out, "HTTP/1.1 "+e.status+" ") {
			t.Fatalf("%s: got %q, want %s", e.name, out, e.status)
		}
	}
	want := []*regexp.Regexp{
		accessLine("GET /ok HTTP/1.1", "200"),
		accessLine("-", "400"),
		accessLine("-", "431"),
		accessLine("POST /upload HTTP/1.1", "413"),
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, re := range want {
		for !re.MatchString(s.logs.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("no access-log line matching %s:\n%s", re, s.logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
