//go:build linux

package tests

import (
	"bufio"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	grantKey     = "the current key of the grant tests"
	grantOldKey  = "the key before it"
	grantMounted = "/rt"
)

// grantArgs mount a hold at /rt beside realtime_app (which issues the
// grants, m0serve.grant) at the root.
var grantArgs = []string{"--workers", "2", "--mount", grantMounted + "=hold", "--mount", "/=realtime_app:app"}

// issueGrant asks the app for a grant on channel (query: ttl, key,
// session).
func issueGrant(t *testing.T, addr, channel, query string) string {
	t.Helper()
	resp, body := get(t, "http://"+addr+"/grant/"+channel+"?"+query)
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "v1.") {
		t.Fatalf("issuing a grant: %d %q", resp.StatusCode, body)
	}
	return strings.TrimSpace(body)
}

// openGrantStream sends GET target with the extra fields and reads the
// answer's head: a held stream's reader, or the status line and the
// whole (framed) body of a refusal.
func openGrantStream(t *testing.T, addr, target string, fields ...string) (status string, c *sseClient, body string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := "GET " + target + " HTTP/1.1\r\nHost: x\r\n"
	for _, f := range fields {
		req += f + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		t.Fatal(err)
	}
	c = &sseClient{t: t, conn: conn, reader: bufio.NewReader(conn)}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	length := -1
	for {
		line, err := c.reader.ReadString('\n')
		if err != nil {
			t.Fatalf("GET %s: reading the head: %v (so far %q)", target, err, c.head)
		}
		if status == "" {
			status = strings.TrimSpace(line)
		}
		c.head += line
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Content-Length") {
			length = atoiOr(strings.TrimSpace(value), -1)
		}
		if line == "\r\n" {
			break
		}
	}
	if length >= 0 {
		b := make([]byte, length)
		if _, err := io.ReadFull(c.reader, b); err != nil {
			t.Fatalf("GET %s: reading the body: %v", target, err)
		}
		body = string(b)
	}
	return status, c, body
}

func atoiOr(s string, or int) int {
	n := 0
	if s == "" {
		return or
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return or
		}
		n = n*10 + int(r-'0')
	}
	return n
}

func streamTarget(grant string) string {
	return grantMounted + "/stream?g=" + url.QueryEscape(grant)
}

// expectRefused checks a 401 with the seed's JSON.
func expectRefused(t *testing.T, addr, what, target, want string, fields ...string) {
	t.Helper()
	status, c, body := openGrantStream(t, addr, target, fields...)
	if status != "HTTP/1.1 401 Unauthorized" || body != want || !strings.Contains(strings.ToLower(c.head), "content-type: application/json\r\n") {
		t.Errorf("%s: %s %q, want 401 %s\n%s", what, status, body, want, c.head)
	}
}

// TestRealtimeGrantHoldMount: --mount /rt=hold holds a stream on the
// channel of a grant m0serve.grant issued, without the app, and delivers
// what is published on it; a grant that does not verify (none, expired,
// another key, a channel changed, a session not its own) is a 401 with
// the Mojo m0serve's JSON.
func TestRealtimeGrantHoldMount(t *testing.T) { realtimeGrantHoldMount(t, serveOurs) }

func realtimeGrantHoldMount(t *testing.T, serve realtimeServer) {
	s := serve(t, "", []string{"M0_GRANT_KEY=" + grantKey}, grantArgs...)
	defer s.stop()
	valid := issueGrant(t, s.addr, "news", "")
	status, held, _ := openGrantStream(t, s.addr, streamTarget(valid))
	if status != "HTTP/1.1 200 OK" {
		t.Fatalf("a valid grant: %s\n%s", status, held.head)
	}
	head := strings.ToLower(held.head)
	for _, want := range []string{"content-type: text/event-stream\r\n", "cache-control: no-cache\r\n", "connection: keep-alive\r\n", "x-accel-buffering: no\r\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("head has no %q:\n%s", want, held.head)
		}
	}
	if strings.Contains(head, "content-length") || strings.Contains(head, "transfer-encoding") {
		t.Errorf("a held stream is framed:\n%s", held.head)
	}
	held.expect(": open\n\n")
	bound := issueGrant(t, s.addr, "news", "session=abc")
	status, boundHeld, _ := openGrantStream(t, s.addr, streamTarget(bound), "Cookie: csrftoken=x; sessionid=abc")
	if status != "HTTP/1.1 200 OK" {
		t.Fatalf("a bound grant with its session: %s", status)
	}
	boundHeld.expect(": open\n\n")

	if got := publish(t, s.addr, "news", "data=hello&event=up"); got != "2" {
		t.Fatalf("publish reached %q workers, want 2", got)
	}
	held.expect("id: 1\nevent: up\ndata: hello\n\n")
	boundHeld.expect("id: 1\nevent: up\ndata: hello\n\n")

	expired := issueGrant(t, s.addr, "news", "ttl=-5")
	otherKey := issueGrant(t, s.addr, "news", "key=another")
	tampered := strings.Replace(valid, ".news.", ".newz.", 1)
	expectRefused(t, s.addr, "no grant", grantMounted+"/stream", `{"error":"invalid","reason":"no grant"}`)
	expectRefused(t, s.addr, "expired", streamTarget(expired), `{"error":"expired","reason":"expired"}`)
	expectRefused(t, s.addr, "another key", streamTarget(otherKey), `{"error":"invalid","reason":"unknown key"}`)
	expectRefused(t, s.addr, "tampered channel", streamTarget(tampered), `{"error":"invalid","reason":"bad signature"}`)
	expectRefused(t, s.addr, "garbage", grantMounted+"/stream?g=garbage", `{"error":"invalid","reason":"malformed"}`)
	expectRefused(t, s.addr, "bound, no cookie", streamTarget(bound), `{"error":"invalid","reason":"no session cookie"}`)
	expectRefused(t, s.addr, "bound, another session", streamTarget(bound), `{"error":"invalid","reason":"session mismatch"}`, "Cookie: sessionid=abd")

	// A replay from the journal, as an app's hold.
	status, replayed, _ := openGrantStream(t, s.addr, streamTarget(valid), "Last-Event-ID: 0")
	if status != "HTTP/1.1 200 OK" {
		t.Fatalf("a second stream: %s", status)
	}
	replayed.expect(": open\n\n")
	publish(t, s.addr, "other", "data=not+yours")
	held.quiet(200 * time.Millisecond)
}

// TestRealtimeGrantPreviousKey: during a rotation a grant of
// M0_GRANT_KEY_PREV verifies as one of M0_GRANT_KEY does.
func TestRealtimeGrantPreviousKey(t *testing.T) { realtimeGrantPreviousKey(t, serveOurs) }

func realtimeGrantPreviousKey(t *testing.T, serve realtimeServer) {
	s := serve(t, "", []string{"M0_GRANT_KEY=" + grantKey, "M0_GRANT_KEY_PREV=" + grantOldKey}, grantArgs...)
	defer s.stop()
	for _, key := range []string{grantKey, grantOldKey} {
		g := issueGrant(t, s.addr, "news", "key="+url.QueryEscape(key))
		status, c, _ := openGrantStream(t, s.addr, streamTarget(g))
		if status != "HTTP/1.1 200 OK" {
			t.Fatalf("a grant of %q: %s", key, status)
		}
		c.expect(": open\n\n")
	}
}

// TestRealtimeGrantMountRefusals: a hold mount without --realtime,
// without M0_GRANT_KEY, or with no app beside it is refused at start
// naming --mount, exit 2.
func TestRealtimeGrantMountRefusals(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"M0_GRANT_KEY=k"}, []string{"--mount", "/rt=hold", "--mount", "/=realtime_app:app"}, "--realtime"},
		{nil, []string{"--realtime", "--mount", "/rt=hold", "--mount", "/=realtime_app:app"}, "M0_GRANT_KEY"},
		{[]string{"M0_GRANT_KEY=k"}, []string{"--realtime", "--mount", "/rt=hold"}, "mount an app"},
	} {
		status, out := runToExit(t, append(cleanEnv(), c.env...), append([]string{"--port", "0", "--app-dir", appsDir(t)}, c.args...)...)
		if status != 2 || !strings.Contains(out, "--mount") || !strings.Contains(out, c.want) || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Errorf("%v: status %d, %q; want 2, one line naming --mount and %s", c.args, status, out, c.want)
		}
	}
}

// TestRealtimeGrantDoctor: --doctor reports a hold mount beside the app
// it imports (with m0pub and grant provided as at a start), and 78 (the
// seed's EX_CONFIG) without M0_GRANT_KEY.
func TestRealtimeGrantDoctor(t *testing.T) {
	args := []string{"--doctor", "--realtime", "--app-dir", appsDir(t), "--mount", "/rt=hold", "--mount", "/=realtime_app:app"}
	status, out := runToExit(t, append(cleanEnv(), "M0_GRANT_KEY=k"), args...)
	if status != 0 || !strings.Contains(out, "/rt=hold") || !strings.Contains(out, "realtime_app:app imports") {
		t.Errorf("--doctor with a hold mount: status %d\n%s", status, out)
	}
	status, out = runToExit(t, cleanEnv(), args...)
	if status != 78 || !strings.Contains(out, "M0_GRANT_KEY is not set") {
		t.Errorf("--doctor without the key: status %d, want 78\n%s", status, out)
	}
}

// TestRealtimeGrantAccessLog: --access-log logs a stream a hold mount
// opened, as the app's requests.
func TestRealtimeGrantAccessLog(t *testing.T) {
	s := serveOurs(t, "", []string{"M0_GRANT_KEY=" + grantKey}, append([]string{"--access-log"}, grantArgs...)...)
	defer s.stop()
	g := issueGrant(t, s.addr, "news", "")
	status, c, _ := openGrantStream(t, s.addr, streamTarget(g))
	if status != "HTTP/1.1 200 OK" {
		t.Fatalf("a valid grant: %s", status)
	}
	c.expect(": open\n\n")
	waitLog(t, s.server, `"GET `+streamTarget(g)+` HTTP/1.1" 200 8`)
}
