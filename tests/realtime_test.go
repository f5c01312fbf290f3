//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sseClient is a held stream read as raw bytes.
type sseClient struct {
	t      *testing.T
	conn   net.Conn
	reader *bufio.Reader
	head   string
	worker string // the pid of the worker that holds it (the view's X-Worker)
}

// subscribe opens a stream on channel with the request's extra fields
// and reads its head and the view's body (": connected").
func subscribe(t *testing.T, addr, channel string, fields ...string) *sseClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := "GET /events/" + channel + " HTTP/1.1\r\nHost: x\r\n"
	for _, f := range fields {
		req += f + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		t.Fatal(err)
	}
	c := &sseClient{t: t, conn: conn, reader: bufio.NewReader(conn)}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		line, err := c.reader.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream's head: %v (so far %q)", err, c.head)
		}
		c.head += line
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "X-Worker") {
			c.worker = strings.TrimSpace(value)
		}
		if line == "\r\n" {
			break
		}
	}
	c.expect(": connected\n\n")
	return c
}

// expect reads exactly want next.
func (c *sseClient) expect(want string) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	if n, err := io.ReadFull(c.reader, got); err != nil {
		c.t.Fatalf("reading %q: %v (got %q)", want, err, got[:n])
	}
	if string(got) != want {
		c.t.Fatalf("stream read %q, want %q", got, want)
	}
}

// quiet checks that nothing more arrives for a while.
func (c *sseClient) quiet(wait time.Duration) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(wait))
	if b, err := c.reader.ReadByte(); err == nil {
		rest, _ := c.reader.Peek(c.reader.Buffered())
		c.t.Fatalf("stream got %q, want nothing", append([]byte{b}, rest...))
	}
}

// publish asks the app to publish and returns its answer: the workers
// reached.
func publish(t *testing.T, addr, channel, query string) string {
	t.Helper()
	_, body := get(t, "http://"+addr+"/publish/"+channel+"?"+query)
	return strings.TrimSpace(body)
}

// realtimeServer starts a server of target (an app in tests/apps) with
// --realtime and args under a master: m0serve (serveOurs), or the Mojo
// m0serve for make test-seed (serveSeed, realtime_seed_test.go), whose
// wire the same clients check.
type realtimeServer func(t *testing.T, target string, env []string, args ...string) *workersServer

func serveOurs(t *testing.T, target string, env []string, args ...string) *workersServer {
	t.Helper()
	return startWorkersApp(t, appsDir(t), target, env, append([]string{"--realtime"}, args...)...)
}

// startRealtime runs realtime_app under a master with args.
func startRealtime(t *testing.T, env []string, args ...string) *workersServer {
	t.Helper()
	return serveOurs(t, "realtime_app:app", env, args...)
}

// subscribeOnEveryWorker opens streams on channel until both workers hold
// one, and returns them all.
func subscribeOnEveryWorker(t *testing.T, addr, channel string) []*sseClient {
	t.Helper()
	var clients []*sseClient
	workers := map[string]bool{}
	for len(workers) < 2 {
		if len(clients) == 64 {
			t.Fatalf("64 streams, all on one worker")
		}
		c := subscribe(t, addr, channel)
		workers[c.worker] = true
		clients = append(clients, c)
	}
	return clients
}

// TestRealtimeHoldAndPublishAcrossWorkers: a view's M0-Hold holds its
// stream (the head without framing or instruction fields, the view's body
// first), and a publish from either worker reaches every stream of its
// channel on both, numbered from one counter, and no other channel's.
func TestRealtimeHoldAndPublishAcrossWorkers(t *testing.T) {
	realtimeHoldAndPublishAcrossWorkers(t, serveOurs)
}

func realtimeHoldAndPublishAcrossWorkers(t *testing.T, serve realtimeServer) {
	s := serve(t, "realtime_app:app", nil, "--workers", "2")
	defer s.stop()
	news := subscribeOnEveryWorker(t, s.addr, "news")
	other := subscribe(t, s.addr, "other")
	head := strings.ToLower(news[0].head)
	for _, want := range []string{"http/1.1 200 ok\r\n", "content-type: text/event-stream\r\n", "connection: keep-alive\r\n", "x-accel-buffering: no\r\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("head has no %q:\n%s", want, news[0].head)
		}
	}
	for _, unwanted := range []string{"content-length", "transfer-encoding", "m0-hold", "m0-channel"} {
		if strings.Contains(head, unwanted) {
			t.Errorf("head has %q:\n%s", unwanted, news[0].head)
		}
	}

	if got := publish(t, s.addr, "news", "data=hello"); got != "2" {
		t.Fatalf("publish reached %q workers, want 2", got)
	}
	if got := publish(t, s.addr, "news", "data=one%0Atwo&event=update"); got != "2" {
		t.Fatalf("publish reached %q workers, want 2", got)
	}
	for _, c := range news {
		c.expect("id: 1\ndata: hello\n\n")
		c.expect("id: 2\nevent: update\ndata: one\ndata: two\n\n")
	}
	other.quiet(200 * time.Millisecond)
	if got := publish(t, s.addr, "other", "frame=data:+raw%0A%0A"); got != "2" {
		t.Fatalf("publish_frame reached %q workers, want 2", got)
	}
	publish(t, s.addr, "other", "data=three")
	other.expect("data: raw\n\n")
	other.expect("id: 3\ndata: three\n\n")
	news[0].quiet(200 * time.Millisecond)
}

// TestRealtimeReplayAndGap: a client reconnecting with Last-Event-ID gets
// its channel's frames after it from the journal, then live ones; one the
// journal cannot continue (--replay-frames past) or ahead of the counter
// gets m0-gap; a fresh one nothing.
func TestRealtimeReplayAndGap(t *testing.T) { realtimeReplayAndGap(t, serveOurs) }

func realtimeReplayAndGap(t *testing.T, serve realtimeServer) {
	s := serve(t, "realtime_app:app", nil, "--workers", "2", "--replay-frames", "3")
	defer s.stop()
	publish(t, s.addr, "r", "data=1")
	publish(t, s.addr, "elsewhere", "data=2")
	publish(t, s.addr, "r", "data=3")
	for range 4 { // either worker: both journal every frame
		c := subscribe(t, s.addr, "r", "Last-Event-ID: 1")
		c.expect("id: 3\ndata: 3\n\n")
		c.quiet(50 * time.Millisecond)
		subscribe(t, s.addr, "r", "Last-Event-ID: 0").quiet(50 * time.Millisecond)
	}
	live := subscribe(t, s.addr, "r", "Last-Event-ID: 2")
	live.expect("id: 3\ndata: 3\n\n")
	publish(t, s.addr, "r", "data=4") // the journal (3 frames) lets id 1 go
	live.expect("id: 4\ndata: 4\n\n")
	subscribe(t, s.addr, "r", "Last-Event-ID: 1").expect("id: 3\ndata: 3\n\nid: 4\ndata: 4\n\n")
	publish(t, s.addr, "r", "data=5") // and id 2: after 1, a frame may be missing
	live.expect("id: 5\ndata: 5\n\n")
	subscribe(t, s.addr, "r", "Last-Event-ID: 1").expect(`event: m0-gap` + "\n" + `data: {"last_event_id":1,"head":5}` + "\n\n")
	subscribe(t, s.addr, "r", "Last-Event-ID: 99").expect(`event: m0-gap` + "\n" + `data: {"last_event_id":99,"head":5}` + "\n\n")
	subscribe(t, s.addr, "r", "Last-Event-ID: 2").expect("id: 3\ndata: 3\n\nid: 4\ndata: 4\n\nid: 5\ndata: 5\n\n")
}

// TestRealtimeShutdownClosesHolds: SIGTERM with streams held sends each
// ": close" and closes it, and the server exits 0 at once (a hold is no
// request in flight).
func TestRealtimeShutdownClosesHolds(t *testing.T) { realtimeShutdownClosesHolds(t, serveOurs) }

func realtimeShutdownClosesHolds(t *testing.T, serve realtimeServer) {
	s := serve(t, "realtime_app:app", nil, "--workers", "2")
	clients := subscribeOnEveryWorker(t, s.addr, "bye")
	began := time.Now()
	s.signal(t, syscall.SIGTERM)
	for _, c := range clients {
		c.expect(": close\n\n")
		c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if b, err := c.reader.ReadByte(); err != io.EOF {
			t.Fatalf("after : close, read %q, %v; want the end of the stream", b, err)
		}
	}
	if err := s.waitExit(20 * time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, s.logs)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the shutdown took %v: held streams waited for the graceful timeout", took)
	}
}

// TestRealtimeHeartbeat: a held stream gets ": heartbeat" every
// M0_SSE_HEARTBEAT_MS.
func TestRealtimeHeartbeat(t *testing.T) { realtimeHeartbeat(t, serveOurs) }

func realtimeHeartbeat(t *testing.T, serve realtimeServer) {
	s := serve(t, "realtime_app:app", []string{"M0_SSE_HEARTBEAT_MS=200"}, "--workers", "1")
	defer s.stop()
	c := subscribe(t, s.addr, "hb")
	c.expect(": heartbeat\n\n")
	c.expect(": heartbeat\n\n")
}

// TestRealtimeChildProcessPublishes: a child process the view starts with
// pass_fds=m0pub.child_fds() publishes to every worker, numbered from the
// same counter.
func TestRealtimeChildProcessPublishes(t *testing.T) { realtimeChildProcessPublishes(t, serveOurs) }

func realtimeChildProcessPublishes(t *testing.T, serve realtimeServer) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal(err)
	}
	// The child's m0serve package: the wheel's m0pub, as an app's venv
	// has it.
	dir := t.TempDir()
	source, err := os.ReadFile(filepath.Join("..", "realtime", "m0pub.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "m0serve"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "m0serve", "__init__.py"), "")
	writeFile(t, filepath.Join(dir, "m0serve", "m0pub.py"), string(source))
	s := serve(t, "realtime_app:app", []string{"REALTIME_CHILD_PYTHON=" + python, "REALTIME_CHILD_PATH=" + dir}, "--workers", "2")
	defer s.stop()
	clients := subscribeOnEveryWorker(t, s.addr, "kids")
	publish(t, s.addr, "kids", "data=parent")
	_, body := get(t, s.url("/child/kids"))
	if strings.TrimSpace(body) != "2" {
		t.Fatalf("the child's publish: %q, want 2 workers reached", body)
	}
	for _, c := range clients {
		c.expect("id: 1\ndata: parent\n\n")
		c.expect("id: 2\ndata: from a child\n\n")
	}
}

// TestRealtimeOffServesTheViewAsIs: without --realtime the same view is a
// short response (the instruction fields dropped) and publish reaches no
// worker: the app runs the same anywhere.
func TestRealtimeOffServesTheViewAsIs(t *testing.T) {
	s := start(t, wsgiVariant(), "--app-dir", appsDir(t), "realtime_app:app")
	defer s.stop()
	resp, body := get(t, s.url("/events/x"))
	if body != ": connected\n\n" || resp.ContentLength != int64(len(body)) {
		t.Fatalf("view: %q, Content-Length %d", body, resp.ContentLength)
	}
	for name := range resp.Header {
		if strings.HasPrefix(strings.ToLower(name), "m0-") {
			t.Errorf("the response carries %s", name)
		}
	}
	if got := publish(t, s.addr, "x", "data=y"); got != "0" {
		t.Fatalf("publish without a bus: %q, want 0", got)
	}
}

// TestRealtimeFlags: --replay-frames past its range, and --threads 0, are
// refused naming the flag.
func TestRealtimeFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--realtime", "--replay-frames", "5000"}, "--replay-frames"},
		{[]string{"--realtime", "--threads", "0"}, "--realtime"},
	} {
		status, out := runToExit(t, cleanEnv(), append(append([]string{"--port", "0", "--app-dir", appsDir(t)}, c.args...), "realtime_app:app")...)
		if status != 2 || !bytes.Contains([]byte(out), []byte(c.flag)) {
			t.Errorf("%v: status %d, %q; want 2 naming %s", c.args, status, out, c.flag)
		}
	}
}

// TestRealtimeASGI: an ASGI app holds a stream the same way and publishes
// through scope["state"]["m0"], whose publish returns the event id.
func TestRealtimeASGI(t *testing.T) { realtimeASGI(t, serveOurs) }

func realtimeASGI(t *testing.T, serve realtimeServer) {
	s := serve(t, "realtime_asgi_app:app", nil, "--workers", "2")
	defer s.stop()
	clients := []*sseClient{subscribe(t, s.addr, "a"), subscribe(t, s.addr, "a")}
	if got := publish(t, s.addr, "a", "hello"); got != "1" {
		t.Fatalf("m0.publish returned %q, want the id 1", got)
	}
	for _, c := range clients {
		c.expect("data: hello\n\n")
	}
}

// TestRealtimeWebSocketHold: a view approving a handshake with M0-Hold:
// websocket gets the 101 from the server; published data reaches the
// socket as text messages, on every worker; each message the client sends
// is a POST /ws/message to the app (M0-Channel, M0-Slot, M0-Opcode), a
// path the network cannot reach; SIGTERM closes with 1001.
func TestRealtimeWebSocketHold(t *testing.T) { realtimeWebSocketHold(t, serveOurs) }

func realtimeWebSocketHold(t *testing.T, serve realtimeServer) {
	s := serve(t, "realtime_app:app", nil, "--workers", "2")
	var clients []*confClient
	for range 6 {
		c, err := confDial(s.addr, "/socket/room", "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.conn.Close()
		clients = append(clients, c)
	}
	read := func(c *confClient, want string) {
		t.Helper()
		m, err := c.readMessage()
		if err != nil || m.op != opText || string(m.payload) != want {
			t.Fatalf("read %d %q, %v; want the text %q", m.op, m.payload, err, want)
		}
	}
	if got := publish(t, s.addr, "room", "data=one%0Atwo"); got != "2" {
		t.Fatalf("publish reached %q workers, want 2", got)
	}
	for _, c := range clients {
		read(c, "one\ntwo")
	}
	if err := clients[0].sendMessage(opText, []byte("hello"), false, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		read(c, "room 1 hello")
	}
	resp, _ := get(t, s.url("/ws/message"))
	if resp.StatusCode != 404 {
		t.Fatalf("/ws/message from the network: %d, want 404", resp.StatusCode)
	}
	s.signal(t, syscall.SIGTERM)
	for _, c := range clients {
		_, err := c.readMessage()
		if closed, ok := err.(*confClosed); !ok || closed.code != 1001 {
			t.Fatalf("at SIGTERM: %v, want a Close with 1001", err)
		}
	}
	if err := s.waitExit(20 * time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, s.logs)
	}
}

// TestRealtimeHoldsCountTowardMaxConnections: held streams are
// connections (--max-connections stops accepting), not handler threads
// (one thread holds many); closing one lets the next client in.
func TestRealtimeHoldsCountTowardMaxConnections(t *testing.T) {
	s := startRealtime(t, nil, "--workers", "1", "--threads", "1", "--max-connections", "3")
	defer s.stop()
	held := []*sseClient{subscribe(t, s.addr, "full"), subscribe(t, s.addr, "full"), subscribe(t, s.addr, "full")}
	answered := make(chan string, 1)
	go func() {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			answered <- err.Error()
			return
		}
		defer conn.Close()
		conn.Write([]byte("GET /publish/full?data=in HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
		b, _ := io.ReadAll(conn)
		answered <- string(b)
	}()
	select {
	case got := <-answered:
		t.Fatalf("a fourth connection was served past --max-connections 3: %q", got)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].conn.Close()
	select {
	case got := <-answered:
		if !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("the fourth connection, once a hold closed: %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fourth connection was not served after a hold closed")
	}
	held[1].expect("id: 1\ndata: in\n\n")
}

// TestRealtimeHealthCountsHolds: --health-path reports the streams the
// worker holds, answered by the loop without entering Python.
func TestRealtimeHealthCountsHolds(t *testing.T) {
	s := startRealtime(t, nil, "--workers", "1", "--health-path", "/healthz")
	defer s.stop()
	subscribe(t, s.addr, "a")
	subscribe(t, s.addr, "b")
	status, body, err := fetch(oneShot(), s.url("/healthz"))
	if err != nil || status != 200 || !strings.Contains(body, `"held_streams":2`) {
		t.Fatalf("health with two holds: %d %q %v", status, body, err)
	}
}
