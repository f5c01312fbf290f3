package cli

import (
	"time"

	"github.com/m0serve/m0serve/server"
	"github.com/m0serve/m0serve/supervisor"
)

// masterServer is the workers' configuration as the master sees it
// (supervisor.Server): the master does not import package server.
type masterServer struct{ cfg *server.Config }

func (s masterServer) Validate() error                { return s.cfg.Validate() }
func (s masterServer) Port() int                      { return s.cfg.Port }
func (s masterServer) GracefulTimeout() time.Duration { return s.cfg.GracefulTimeout }
func (s masterServer) MetricsAddress() string         { return s.cfg.MetricsAddress }
func (s masterServer) ServesApp() bool                { return s.cfg.App != "" }
func (s masterServer) SharedListener() bool           { return s.cfg.SharedListener() }
func (s masterServer) CheckTLS() error                { return s.cfg.CheckTLS() }
func (s masterServer) ReopenLogFiles() error          { return server.ReopenLogFiles(s.cfg) }

func (s masterServer) Listen(port int, reusePort bool) (supervisor.Socket, error) {
	l, err := server.Listen(s.cfg, port, reusePort)
	if err != nil {
		return supervisor.Socket{}, err
	}
	return supervisor.Socket{
		FD:        l.FD,
		Port:      int(l.Addr.Port()),
		URL:       s.cfg.ListenerURL(&l),
		Inherited: l.Inherited,
		Close:     l.Close,
	}, nil
}
