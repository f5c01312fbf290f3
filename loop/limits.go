package loop

import (
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// admitPerIP counts a connection just accepted against its address's
// share (Config.MaxConnectionsPerIP), or closes it when the address has
// its share open already: one client cannot hold every slot. It returns
// the peer's address and whether the connection was counted; false and
// a closed fd when it was refused. The refused client sees its
// connection reset without a response; no slot is spent on it.
func (l *Loop) admitPerIP(fd int) (peer netip.AddrPort, counted, admitted bool) {
	peer, ok := peerAddr(fd)
	if !ok {
		// Not an IP peer (or gone already): nothing to count it by.
		return peer, false, true
	}
	if l.perIP == nil {
		l.perIP = make(map[netip.Addr]int32)
	}
	addr := peer.Addr()
	n := l.perIP[addr]
	if int(n) >= l.cfg.MaxConnectionsPerIP {
		// RST rather than FIN: nothing will be read or answered.
		unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
		unix.Close(fd)
		if held, ok := l.perIPRefused.allow(l.now); ok {
			l.cfg.Logf("m0serve: %s has %d connections open, the --max-connections-per-ip limit: refusing more (%d refused since the last report)", addr, n, held)
		}
		return peer, false, false
	}
	l.perIP[addr] = n + 1
	return peer, true, true
}

// releasePerIP uncounts a closed connection from addr.
func (l *Loop) releasePerIP(addr netip.Addr) {
	if n := l.perIP[addr]; n > 1 {
		l.perIP[addr] = n - 1
	} else {
		delete(l.perIP, addr)
	}
}

// peerAddr is the connection's peer address, IPv4-mapped addresses
// unmapped so one client counts once whichever family it came in by.
func peerAddr(fd int) (netip.AddrPort, bool) {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return netip.AddrPort{}, false
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), true
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port)), true
	}
	return netip.AddrPort{}, false
}

// logInterval is the shortest time between two log lines about one
// recurring condition (a limit hit under load would otherwise write a
// line per connection).
const logInterval = 10 * time.Second

// throttledLog lets one line through per logInterval and counts the
// occurrences in between.
type throttledLog struct {
	next int64 // unix ns before which lines are held back
	held int   // occurrences since the last line, this one included
}

// allow records an occurrence at now and reports whether to log it, with
// how many occurrences the line stands for.
func (t *throttledLog) allow(now int64) (int, bool) {
	t.held++
	if now < t.next {
		return 0, false
	}
	n := t.held
	t.held = 0
	t.next = now + int64(logInterval)
	return n, true
}
