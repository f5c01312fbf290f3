package server

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"golang.org/x/sys/unix"
)

// listen opens the non-blocking listening socket the loop accepts on: the
// --uds, --fd or systemd one, else a TCP socket bound to --host and
// --port (its Addr has the real port when 0 was asked for).
func (c *Config) listen() (Listener, error) {
	return Listen(c, c.Port, false)
}

// Listen opens a listening socket for a master to hand its workers (with
// SO_REUSEPORT when reusePort is set: one per worker slot, the kernel
// spreading connections among them), or takes the one socket cfg names
// (SharedListener). A ConfigError names --host.
func Listen(cfg *Config, port int, reusePort bool) (Listener, error) {
	if l, ok, err := cfg.openShared(); ok {
		return l, err
	}
	fd, addr, err := listenSocket(cfg.Host, port, cfg.Backlog, reusePort)
	return Listener{FD: fd, Addr: addr}, err
}

func listenSocket(host string, port, backlog int, reusePort bool) (int, netip.AddrPort, error) {
	addr, err := resolveHost(host)
	if err != nil {
		return -1, netip.AddrPort{}, &ConfigError{Flag: "host", Reason: err.Error()}
	}
	family := unix.AF_INET
	if addr.Is6() {
		family = unix.AF_INET6
	}
	// SOCK_NONBLOCK and SOCK_CLOEXEC at creation are Linux-only; the
	// listener is made once, so two more calls cost nothing that matters.
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err != nil {
		return -1, netip.AddrPort{}, fmt.Errorf("socket: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, netip.AddrPort{}, fmt.Errorf("non-blocking listener: %w", err)
	}
	// A restart must not wait out TIME_WAIT connections of the last run.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return -1, netip.AddrPort{}, fmt.Errorf("SO_REUSEADDR: %w", err)
	}
	if reusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			unix.Close(fd)
			return -1, netip.AddrPort{}, fmt.Errorf("SO_REUSEPORT: %w", err)
		}
	}
	var sa unix.Sockaddr
	if addr.Is4() {
		sa = &unix.SockaddrInet4{Port: port, Addr: addr.As4()}
	} else {
		sa = &unix.SockaddrInet6{Port: port, Addr: addr.As16()}
	}
	where := net.JoinHostPort(addr.String(), strconv.Itoa(port))
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, netip.AddrPort{}, fmt.Errorf("bind %s: %w", where, err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		return -1, netip.AddrPort{}, fmt.Errorf("listen %s: %w", where, err)
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, netip.AddrPort{}, fmt.Errorf("getsockname: %w", err)
	}
	switch b := bound.(type) {
	case *unix.SockaddrInet4:
		port = b.Port
	case *unix.SockaddrInet6:
		port = b.Port
	}
	return fd, netip.AddrPortFrom(addr, uint16(port)), nil
}

func resolveHost(host string) (netip.Addr, error) {
	if host == "" {
		return netip.IPv4Unspecified(), nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap(), nil
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("%q: not an address or a resolvable name", host)
	}
	for _, ip := range ips {
		if v4 := ip.To4(); v4 != nil {
			addr, _ := netip.AddrFromSlice(v4)
			return addr, nil
		}
	}
	addr, _ := netip.AddrFromSlice(ips[0])
	return addr, nil
}
