package cli

import (
	"flag"
	"strconv"

	"github.com/m0serve/m0serve/server"
)

// realtimeFlag is --realtime: the worker's Config and the master's (which
// makes the bus) both hear it.
type realtimeFlag struct{ cfg *server.Config }

func (f realtimeFlag) String() string {
	if f.cfg == nil {
		return "false"
	}
	return strconv.FormatBool(f.cfg.Realtime)
}

func (f realtimeFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	f.cfg.Realtime, master.Realtime = on, on
	return nil
}

func (f realtimeFlag) IsBoolFlag() bool { return true }

func addRealtimeFlags(fs *flag.FlagSet, cfg *server.Config) {
	fs.Var(realtimeFlag{cfg}, "realtime", "hold the SSE streams a WSGI view asks for with M0-Hold and M0-Channel; m0pub.publish reaches them on every worker (README, Realtime)")
	fs.Var(pgListenFlag{cfg}, "pg-listen", "with --realtime: LISTEN on this Postgres database's channel m0 and publish each NOTIFY (README, Realtime)")
	fs.IntVar(&cfg.ReplayFrames, "replay-frames", cfg.ReplayFrames, "with --realtime: frames each worker keeps for clients reconnecting with Last-Event-ID (0 to 4096)")
}

// pgListenFlag is --pg-listen: the master listens with --workers, a
// single process itself.
type pgListenFlag struct{ cfg *server.Config }

func (f pgListenFlag) String() string {
	if f.cfg == nil {
		return ""
	}
	return f.cfg.PGListen
}

func (f pgListenFlag) Set(s string) error {
	f.cfg.PGListen, master.PGListen = s, s
	return nil
}
