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

// TestAccessLogTraceID: the trace id of a request's W3C traceparent is
// the access log's %(trace_id)s ("-" without one) and, with --log-format
// json, every access object's trace_id (null without one), for WSGI and
// ASGI apps.
func TestAccessLogTraceID(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	traceparent := "00-" + id + "-00f067aa0ba902b7-01"
	request := func(s *server, path, traceparent string) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.url(path), nil)
		if traceparent != "" {
			req.Header.Set("Traceparent", traceparent)
		}
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
	}
	for _, app := range []string{"osenv_app:app", "http_asgi_app:app"} {
		s := startWSGI(t, app, "--access-log", "--access-log-format", `"%(r)s" %(s)s %(trace_id)s`)
		request(s, "/traced", traceparent)
		request(s, "/untraced", "")
		request(s, "/bad", "00-"+strings.ToUpper(id)+"-00f067aa0ba902b7-01")
		s.stop()
		for _, want := range []string{`"GET /traced HTTP/1.1" 200 ` + id + "\n", `"GET /untraced HTTP/1.1" 200 -` + "\n", `"GET /bad HTTP/1.1" 200 -` + "\n"} {
			if !strings.Contains(s.logs.String(), want) {
				t.Errorf("%s: no %q in the access log:\n%s", app, want, s.logs)
			}
		}

		file, addr := inheritedTCP(t)
		cmd := m0serveCommand("--fd", "3", "--log-format", "json", "--access-log", "--app-dir", appsDir(t), app)
		cmd.ExtraFiles = append(cmd.ExtraFiles, file)
		s = startReady(t, cmd, regexp.MustCompile(`"msg":"[^"]*serving on http://`), 1)
		s.addr = addr
		request(s, "/traced", traceparent)
		request(s, "/untraced", "")
		s.stop()
		found := map[string]any{}
		for _, line := range strings.Split(s.logs.String(), "\n") {
			var entry map[string]any
			if json.Unmarshal([]byte(line), &entry) != nil {
				continue
			}
			if r, ok := entry["request"].(string); ok {
				id, has := entry["trace_id"]
				if !has {
					id = "absent"
				}
				found[r] = id
			}
		}
		if found["GET /traced HTTP/1.1"] != id || found["GET /untraced HTTP/1.1"] != nil {
			t.Errorf("%s: trace_id by request %v:\n%s", app, found, s.logs)
		}
	}
}
