//go:build linux

package tests

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAccessLogFormat: gunicorn's atoms, request and response fields and
// the duration, for the app's responses (handler threads and --threads
// 0), a native handler's and one the loop answers itself (413); a mistake in
// the format is a config error.
func TestAccessLogFormat(t *testing.T) {
	format := `%(h)s "%(r)s" %(s)s %(b)s "%(a)s" id=%({x-request-id}i)s type=%({content-type}o)s %(D)sus %(M)sms`
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"wsgi", "application/json", []string{"--app-dir", appsDir(t), "proxy_app:app"}},
		{"wsgi-inline", "application/json", []string{"--threads", "0", "--app-dir", appsDir(t), "proxy_app:app"}},
		{"native", "-", []string{"--native", "hello"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, wsgiVariant(), append([]string{"--access-log", "--access-log-format", format, "--max-body-size", "10"}, c.args...)...)
			req, _ := http.NewRequest("GET", s.url("/a?b=1"), nil)
			req.Header.Set("User-Agent", "e2e/1")
			req.Header.Set("X-Request-Id", "r-42")
			resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readBody(t, resp)
			if _, err := rawExchange(t, s.addr, "POST / HTTP/1.1\r\nHost: x\r\nUser-Agent: raw\r\nContent-Length: 100\r\n\r\n", 10*time.Second); err != nil {
				t.Fatal(err)
			}
			s.stop()
			app := regexp.MustCompile(`(?m)^127\.0\.0\.1 "GET /a\?b=1 HTTP/1\.1" 200 \d+ "e2e/1" id=r-42 type=` + regexp.QuoteMeta(c.want) + ` \d+us \d+ms$`)
			loop := regexp.MustCompile(`(?m)^127\.0\.0\.1 "POST / HTTP/1\.1" 413 \d+ "raw" id=- type=- 0us 0ms$`)
			if logs := s.logs.String(); !app.MatchString(logs) || !loop.MatchString(logs) {
				t.Errorf("access log lines not in the format:\n%s", logs)
			}
		})
	}
	status, out := runToExit(t, cleanEnv(), "--native", "hello", "--access-log-format", "%(h)s %(x)s")
	if status != 2 || !strings.HasPrefix(out, "m0serve: --access-log-format: %(x)s: unknown atom") {
		t.Errorf("unknown atom: status %d\n%s", status, out)
	}
}
