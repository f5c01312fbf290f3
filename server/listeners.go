package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Listener is the listening socket the loop accepts on: a TCP socket of
// --host/--port, a Unix socket of --uds, or one inherited (--fd, systemd
// socket activation, or a worker's from its master).
type Listener struct {
	FD   int
	Addr netip.AddrPort // a TCP socket's address; invalid for a Unix socket
	Path string         // a Unix socket's path
	// Inherited: the socket came from elsewhere (--fd, systemd), so a
	// master shares it among its workers rather than opening more.
	Inherited bool
	created   bool // Path was bound here: Close removes the file
}

// URL is where the listener serves, for the start line.
func (l *Listener) URL() string {
	if !l.Addr.IsValid() {
		return "unix:" + l.Path
	}
	return "http://" + net.JoinHostPort(l.Addr.Addr().String(), strconv.Itoa(int(l.Addr.Port())))
}

// serverName and serverPort are SERVER_NAME and SERVER_PORT (the ASGI
// scope's server): for a Unix socket its path and 80, as gunicorn has it.
func (l *Listener) serverName() string {
	if !l.Addr.IsValid() {
		return l.Path
	}
	return l.Addr.Addr().String()
}

func (l *Listener) serverPort() int {
	if !l.Addr.IsValid() {
		return 80
	}
	return int(l.Addr.Port())
}

// Close closes the socket and removes the socket file this process made.
func (l *Listener) Close() {
	unix.Close(l.FD)
	if l.created {
		os.Remove(l.Path)
	}
}

// SharedListener reports whether cfg names one socket for every worker
// (--uds, --fd, systemd socket activation) rather than --host/--port.
func (c *Config) SharedListener() bool {
	return c.UDS != "" || c.FD >= 0 || systemdListenFDs() > 0
}

// openShared opens the --uds socket or takes the --fd or systemd one; ok
// is false when cfg names none of them.
func (c *Config) openShared() (l Listener, ok bool, err error) {
	switch {
	case c.UDS != "":
		l, err = listenUnix(c.UDS, c.UDSMode, c.Backlog)
		return l, true, err
	case c.FD >= 0:
		l, err = inheritedListener(c.FD, "fd")
		return l, true, err
	}
	if n := systemdListenFDs(); n > 0 {
		// The first socket; the variables are this process's only.
		for _, name := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
			os.Unsetenv(name)
		}
		l, err = inheritedListener(systemdFirstFD, "")
		if err != nil {
			err = fmt.Errorf("systemd socket activation (LISTEN_FDS=%d): %w", n, err)
		}
		return l, true, err
	}
	return Listener{}, false, nil
}

// systemdFirstFD is SD_LISTEN_FDS_START: the first socket systemd passes.
const systemdFirstFD = 3

// systemdListenFDs is how many sockets systemd passed this process
// (sd_listen_fds(3): LISTEN_FDS, when LISTEN_PID is this process).
func systemdListenFDs() int {
	pid, err := strconv.Atoi(os.Getenv("LISTEN_PID"))
	if err != nil || pid != os.Getpid() {
		return 0
	}
	n, err := strconv.Atoi(os.Getenv("LISTEN_FDS"))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// listenUnix binds a Unix socket at path with the file mode given. A
// stale socket file (nothing listening: a crashed run's) is replaced; a
// live one, or a file that is not a socket, is refused.
func listenUnix(path string, mode fs.FileMode, backlog int) (Listener, error) {
	if info, err := os.Lstat(path); err == nil {
		if info.Mode().Type() != fs.ModeSocket {
			return Listener{}, &ConfigError{Flag: "uds", Reason: fmt.Sprintf("%s: exists and is not a socket", path)}
		}
		if conn, err := net.Dial("unix", path); err == nil {
			conn.Close()
			return Listener{}, &ConfigError{Flag: "uds", Reason: fmt.Sprintf("%s: another server is listening on it", path)}
		}
		if err := os.Remove(path); err != nil {
			return Listener{}, fmt.Errorf("removing the stale socket %s: %w", path, err)
		}
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return Listener{}, fmt.Errorf("socket: %w", err)
	}
	unix.CloseOnExec(fd)
	fail := func(what string, err error) (Listener, error) {
		unix.Close(fd)
		return Listener{}, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return fail("non-blocking", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return fail("bind", err)
	}
	l := Listener{FD: fd, Path: path, created: true}
	// Before listen: no client connects while the mode is not yet set.
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return Listener{}, fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		l.Close()
		return Listener{}, fmt.Errorf("listen %s: %w", path, err)
	}
	return l, nil
}

// inheritedListener takes a listening socket this process was given. flag
// names the flag a mistake is reported against ("" for systemd's).
func inheritedListener(fd int, flag string) (Listener, error) {
	fail := func(reason string) (Listener, error) {
		if flag == "" {
			return Listener{}, errors.New(reason)
		}
		return Listener{}, &ConfigError{Flag: flag, Reason: fmt.Sprintf("%d: %s", fd, reason)}
	}
	if listening, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || listening != 1 {
		return fail("not a listening socket")
	}
	if kind, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || kind != unix.SOCK_STREAM {
		return fail("not a stream socket")
	}
	l, err := describeListener(fd)
	if err != nil {
		return fail(err.Error())
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		return fail("non-blocking: " + err.Error())
	}
	l.Inherited = true
	return l, nil
}

// describeListener reads what a socket is bound to.
func describeListener(fd int) (Listener, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return Listener{}, fmt.Errorf("getsockname: %w", err)
	}
	l := Listener{FD: fd}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		l.Addr = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		l.Addr = netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	case *unix.SockaddrUnix:
		l.Path = a.Name
	default:
		return Listener{}, errors.New("neither a TCP nor a Unix socket")
	}
	return l, nil
}
