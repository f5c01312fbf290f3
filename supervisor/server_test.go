package supervisor

import (
	"fmt"
	"time"

	"github.com/m0serve/m0serve/internal/configerr"
	"golang.org/x/sys/unix"
)

// testServer stands in for package server's configuration: the master's
// tests need no cgo. Listen opens real TCP sockets on 127.0.0.1.
type testServer struct {
	port     int
	grace    time.Duration
	invalid  error // Validate's answer
	tlsError error // CheckTLS's
	reopened int
}

func (s *testServer) Validate() error { return s.invalid }
func (s *testServer) Port() int       { return s.port }
func (s *testServer) GracefulTimeout() time.Duration {
	if s.grace == 0 {
		return 30 * time.Second
	}
	return s.grace
}
func (s *testServer) MetricsAddress() string { return "" }
func (s *testServer) ServesApp() bool        { return true }
func (s *testServer) SharedListener() bool   { return false }
func (s *testServer) CheckTLS() error        { return s.tlsError }
func (s *testServer) ReopenLogFiles() error  { s.reopened++; return nil }

func (s *testServer) Listen(port int, reusePort bool) (Socket, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return Socket{}, err
	}
	fail := func(err error) (Socket, error) {
		unix.Close(fd)
		return Socket{}, &configerr.Error{Flag: "host", Reason: err.Error()}
	}
	if reusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return fail(err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail(err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fail(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fail(err)
	}
	port = sa.(*unix.SockaddrInet4).Port
	return Socket{FD: fd, Port: port, URL: fmt.Sprintf("http://127.0.0.1:%d", port), Close: func() { unix.Close(fd) }}, nil
}
