//go:build linux

package tests

import (
	"strings"
	"testing"
	"time"
)

// TestHTTP2ResponseFieldsFromApps (issue 37): what a WSGI or ASGI app sets
// as a response field reaches an HTTP/2 client as that one field, its name
// in lower case (RFC 9113 §8.2.1), a hop-by-hop one dropped (§8.2.2); a
// field with CR LF in its value or name, or a pseudo-header's name, is
// refused (a 500 on that stream) and never becomes a field of its own,
// and the connection serves its next stream.
func TestHTTP2ResponseFieldsFromApps(t *testing.T) {
	apps := []struct {
		name string
		args []string
	}{
		{"wsgi", []string{"h2_hostile_app:application"}},
		{"asgi-loop", []string{"--asgi-thread", "loop", "h2_hostile_app:app"}},
		{"asgi-executor", []string{"--asgi-thread", "executor", "h2_hostile_app:app"}},
	}
	for _, app := range apps {
		t.Run(app.name, func(t *testing.T) {
			s := startH2(t, variants[0], false, app.args...)
			c := dialH2(t, s)
			mu := newAtomicMutex()
			r := readH2(c, mu)
			id := uint32(1)
			get := func(path string) (fields [][2]string, status string, body []byte) {
				t.Helper()
				mu.Lock()
				c.writeRequest(t, id, [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", s.addr}, {":path", path}}, true)
				mu.Unlock()
				for {
					e := r.next(t, 30*time.Second)
					switch {
					case e.closed || e.goAway:
						t.Fatalf("%s: the connection ended (%v, %v)", path, e.code, e.readErr)
					case e.stream != id:
						continue
					case e.reset:
						t.Fatalf("%s: stream reset %v", path, e.code)
					}
					for _, f := range e.fields {
						fields = append(fields, [2]string{f.Name, f.Value})
					}
					if e.status != "" {
						status = e.status
					}
					body = append(body, e.data...)
					if e.end {
						id += 2
						return fields, status, body
					}
				}
			}
			for _, path := range []string{"/bad-value", "/bad-name", "/bad-name-crlf"} {
				fields, status, _ := get(path)
				if status != "500" {
					t.Errorf("%s: status %q, want 500", path, status)
				}
				for _, f := range fields {
					if f[0] == "x-injected" || f[0] == "x-a" || f[0] != ":status" && strings.HasPrefix(f[0], ":") ||
						strings.ContainsAny(f[0]+f[1], "\r\n\x00") {
						t.Errorf("%s: the client got the field %q", path, f)
					}
				}
			}
			fields, status, body := get("/fields")
			if status != "200" || string(body) != "fields" {
				t.Fatalf("/fields: %q %q", status, body)
			}
			var got []string
			for _, f := range fields {
				switch f[0] {
				case ":status", "date", "server", "content-length":
				default:
					got = append(got, f[0]+"="+f[1])
				}
			}
			want := "content-type=text/plain x-upper-case=v x-tab=a\tb set-cookie=a=1 set-cookie=b=2"
			if g := strings.Join(got, " "); g != want {
				t.Errorf("/fields: the client got\n%q\nwant\n%q", g, want)
			}
			c.Close()
		})
	}
}
