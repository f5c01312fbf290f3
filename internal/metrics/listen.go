package metrics

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The metrics listener's bounds. A scraper makes one request every few
// seconds on one connection; nothing legitimate keeps many open, and each
// connection is a descriptor of the master (or the worker) that a flood of
// idle ones would otherwise pin: with --workers the master then could not
// make a control socketpair for a worker it respawns.
const (
	metricsMaxConns          = 16
	metricsReadHeaderTimeout = 5 * time.Second
	metricsReadTimeout       = 10 * time.Second
	metricsWriteTimeout      = 30 * time.Second
	metricsIdleTimeout       = 60 * time.Second
)

// cappedListener keeps at most max connections open. At the cap, a new
// connection evicts the one idle longest (between requests, or not yet
// sent one), so idle connections never lock a scraper out; when every one
// is inside a request (bounded by the server's read and write timeouts)
// the new one is closed at once, rather than left queued in the backlog
// as x/net/netutil's LimitListener does.
type cappedListener struct {
	net.Listener
	max int

	mu   sync.Mutex
	open map[*cappedConn]struct{}
}

func newCappedListener(ln net.Listener, max int) *cappedListener {
	return &cappedListener{Listener: ln, max: max, open: make(map[*cappedConn]struct{}, max)}
}

func (l *cappedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		conn := &cappedConn{Conn: c, l: l, idle: true, idleSince: time.Now()}
		l.mu.Lock()
		var evict *cappedConn
		if len(l.open) >= l.max {
			for o := range l.open {
				if o.idle && (evict == nil || o.idleSince.Before(evict.idleSince)) {
					evict = o
				}
			}
			if evict == nil {
				l.mu.Unlock()
				c.Close()
				continue
			}
			delete(l.open, evict)
		}
		l.open[conn] = struct{}{}
		l.mu.Unlock()
		if evict != nil {
			evict.Conn.Close()
		}
		return conn, nil
	}
}

// connState is the http.Server's ConnState hook: it tells the listener
// which connections are between requests.
func (l *cappedListener) connState(c net.Conn, state http.ConnState) {
	conn, ok := c.(*cappedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	switch state {
	case http.StateNew, http.StateIdle:
		conn.idle, conn.idleSince = true, time.Now()
	case http.StateActive:
		conn.idle = false
	case http.StateClosed, http.StateHijacked:
		delete(l.open, conn)
	}
	l.mu.Unlock()
}

// cappedConn is one connection the listener counts; idle and idleSince
// are guarded by the listener's mu.
type cappedConn struct {
	net.Conn
	l         *cappedListener
	idle      bool
	idleSince time.Time
}

func (c *cappedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.open, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
