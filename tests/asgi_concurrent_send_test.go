//go:build linux

package tests

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestASGIConcurrentSends: tasks of an ASGI app that send on one
// connection at once, with no lock, as uvicorn and Granian allow: every
// message arrives whole and each task's in order (no 1011, no
// RuntimeError), on both backends and both --asgi-thread places.
func TestASGIConcurrentSends(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		for _, thread := range []string{"loop", "executor"} {
			t.Run(thread, func(t *testing.T) {
				s := startASGI(t, v, "asgi_concurrent_send_app:app", "--asgi-thread", thread)
				base := "ws://" + s.addr
				t.Run("tasks", func(t *testing.T) { testConcurrentSendTasks(t, base) })
				t.Run("broadcast", func(t *testing.T) { testConcurrentSendBroadcast(t, base) })
				t.Run("stream", func(t *testing.T) { testConcurrentSendStream(t, s) })
				checkNoTraceback(t, s.server)
			})
		}
	})
}

// inOrder takes messages "tag i" and checks each tag's i count up from 0
// to n-1.
type inOrder map[string]int

func (o inOrder) add(t *testing.T, tag, i string) {
	t.Helper()
	if i != fmt.Sprint(o[tag]) {
		t.Fatalf("message %s %s out of order: want %s %d", tag, i, tag, o[tag])
	}
	o[tag]++
}

func (o inOrder) check(t *testing.T, tags []string, n int) {
	t.Helper()
	for _, tag := range tags {
		if o[tag] != n {
			t.Fatalf("%d messages of %s, want %d", o[tag], tag, n)
		}
	}
}

// testConcurrentSendTasks: four tasks send 25 messages each per client
// message.
func testConcurrentSendTasks(t *testing.T, base string) {
	c, _, err := websocket.DefaultDialer.Dial(base+"/tasks", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for _, m := range []string{"x", "y"} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
		order := inOrder{}
		for i := 0; i < 4*25; i++ {
			_, p, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("message %d of %s: %v", i, m, err)
			}
			f := strings.Fields(string(p))
			if len(f) != 3 || f[0] != m {
				t.Fatalf("message %q for %s", p, m)
			}
			order.add(t, f[1], f[2])
		}
		order.check(t, []string{"0", "1", "2", "3"}, 25)
	}
}

// testConcurrentSendBroadcast: four clients send 20 messages each at
// once; each client gets all 80, each sender's in order.
func testConcurrentSendBroadcast(t *testing.T, base string) {
	const clients, messages = 4, 20
	conns := make([]*websocket.Conn, clients)
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial(base+"/broadcast", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	// Every client is registered once a message of its own comes back.
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf("hello%d 0", i))); err != nil {
			t.Fatal(err)
		}
		for {
			_, p, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("client %d's hello: %v", i, err)
			}
			if string(p) == fmt.Sprintf("hello%d 0", i) {
				break
			}
		}
	}
	// The hellos of later clients reached the earlier ones: skip them.
	for i, c := range conns {
		for j := i + 1; j < clients; j++ {
			if _, p, err := c.ReadMessage(); err != nil || string(p) != fmt.Sprintf("hello%d 0", j) {
				t.Fatalf("client %d: %q, %v", i, p, err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < messages; n++ {
				if err := c.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf("c%d %d", i, n))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	tags := make([]string, clients)
	for i := range tags {
		tags[i] = fmt.Sprintf("c%d", i)
	}
	for i, c := range conns {
		order := inOrder{}
		for n := 0; n < clients*messages; n++ {
			_, p, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("client %d, message %d: %v", i, n, err)
			}
			f := strings.Fields(string(p))
			if len(f) != 2 {
				t.Fatalf("client %d: message %q", i, p)
			}
			order.add(t, f[0], f[1])
		}
		order.check(t, tags, messages)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// testConcurrentSendStream: two tasks stream one body.
func testConcurrentSendStream(t *testing.T, s *asgiServer) {
	resp, body := get(t, s.url("/stream"))
	if resp.StatusCode != 200 || !strings.HasSuffix(body, "end") {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	order := inOrder{}
	for _, piece := range strings.Split(strings.TrimSuffix(body, "end"), ";") {
		if piece == "" {
			continue
		}
		order.add(t, piece[:1], strings.TrimPrefix(piece[1:], "0"))
	}
	order.check(t, []string{"a", "b"}, 50)
}
