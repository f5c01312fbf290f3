package supervisor

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// queuedOn dials n connections to port and returns how many each slot's
// socket holds in its accept queue once all are there.
func queuedOn(t *testing.T, m *master, port, n int) []int {
	t.Helper()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	before := make([]int, len(m.slots))
	for i, s := range m.slots {
		before[i], _ = queued(s.listenFD)
	}
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		got, total := make([]int, len(m.slots)), 0
		for i, s := range m.slots {
			q, err := queued(s.listenFD)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = q - before[i]
			total += got[i]
		}
		if total == n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v of %d connections queued", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A busy worker's socket gets no new connections while another worker has
// room; once none is busy, or every one is, both sockets get them.
func TestRebalanceAroundBusyWorker(t *testing.T) {
	cfg := Defaults
	cfg.Workers = 2
	cfg.Listener = "reuseport"
	cfg.Server = &testServer{}
	m := &master{cfg: cfg, logf: t.Logf, shared: -1, booted: true}
	port := 0
	for i := 0; i < 2; i++ {
		if err := m.addSlot(&port); err != nil {
			t.Fatal(err)
		}
	}
	defer m.closeSockets()
	for _, s := range m.slots {
		s.current = &worker{slot: s, readyAt: time.Now(), capacity: 1}
	}

	m.slots[0].current.busy = true
	if err := m.rebalance(); err != nil {
		t.Fatal(err)
	}
	if got := queuedOn(t, m, port, 20); got[0] != 0 {
		t.Errorf("worker 0 busy: its socket got %d of 20 connections (%v)", got[0], got)
	}

	for name, busy := range map[string]bool{"none busy": false, "every one busy": true} {
		for _, s := range m.slots {
			s.current.busy = busy
		}
		if err := m.rebalance(); err != nil {
			t.Fatal(err)
		}
		// At random over both: all 40 on one socket is 2^-39.
		if got := queuedOn(t, m, port, 40); got[0] == 0 || got[1] == 0 {
			t.Errorf("%s: 40 connections went %v", name, got)
		}
	}
}
