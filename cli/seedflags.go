package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/m0serve/m0serve/server"
)

// The seed's flag spellings (the Mojo m0serve, whose users come to this
// one), accepted beside ours with the seed's meaning. Where the seed and
// we name one setting twice, both flags write the same field: the last
// given wins, as for any repeated flag.

// doctor is --doctor: report the configuration as JSON and exit
// (doctor.go).
var doctor bool

// seedStatic collects --static PREFIX=DIR, appended to the
// --static-path-mount pairs (pairStaticMounts) in the order given.
var seedStatic []server.StaticMount

func addSeedFlags(fs *flag.FlagSet, cfg *server.Config) {
	fs.StringVar(&cfg.Interface, "protocol", cfg.Interface, "the seed's --interface: auto, wsgi or asgi")
	fs.Var(staticPair{}, "static", "serve DIR at PREFIX without the app (the seed's spelling of --static-path-mount DIR --static-path-route PREFIX; repeatable)")
	fs.StringVar(&cfg.StaticCacheControl, "static-cache-control", cfg.StaticCacheControl, "Cache-Control of static responses, replacing --static-path-expires' max-age")
	fs.Var((*stringList)(&cfg.StaticHeaders), "static-header", "'Name: value' field on every static response, errors included (repeatable; X-Content-Type-Options: nosniff is always sent unless one replaces it)")
	fs.Var((*size)(&cfg.MaxBodySize), "max-body", "the seed's --max-body-size: largest request body (512k, 64m, 1g); 413 beyond")
	fs.IntVar(&cfg.MaxKeepAliveRequests, "max-keepalive-requests", cfg.MaxKeepAliveRequests, "close a keep-alive connection after this many requests (0: never)")
	fs.Var((*idleTimeout)(&cfg.KeepAliveTimeout), "idle-timeout", "the seed's --keepalive-timeout: close a keep-alive connection idle this long (0: never)")
	fs.IntVar(&cfg.Threads, "blocking-threads", cfg.Threads, "the seed's --threads: WSGI handler threads per worker (0: the app runs on the I/O thread)")
	fs.BoolVar(&cfg.Metrics, "metrics", cfg.Metrics, "serve Prometheus metrics at "+server.MetricsPath+" on the serving port (a worker's own; --metrics-address has the master's sum)")
	fs.StringVar(&cfg.HealthPath, "health-path", cfg.HealthPath, `answer PATH with {"status": "ok", ...} from the server, never the app`)
	fs.Var((*mountList)(&cfg.Mounts), "mount", "serve the app SPEC (WSGI or ASGI; hold: grant-verified streams) under PREFIX, its SCRIPT_NAME or root_path; repeatable, longest prefix wins")
	fs.BoolVar(&doctor, "doctor", false, "print this configuration as JSON (interpreter, topology, the app's protocol, every start-up check) and exit: 0, 2 usage, 1 start-up, 78 config")
}

func init() {
	helpGroups = append(helpGroups, struct {
		title string
		flags []string
	}{"The seed's spellings (the Mojo m0serve's flags)", []string{"doctor", "mount", "protocol", "static", "static-cache-control",
		"static-header", "max-body", "max-keepalive-requests", "idle-timeout", "blocking-threads", "metrics", "health-path"}})
	for name, placeholder := range map[string]string{
		"protocol": "auto|wsgi|asgi", "static": "PREFIX=DIR", "mount": "PREFIX=SPEC", "static-cache-control": "VALUE",
		"static-header": "'NAME: VALUE'", "max-body": "BYTES", "max-keepalive-requests": "N",
		"idle-timeout": "DURATION", "blocking-threads": "N", "health-path": "PATH",
	} {
		placeholders[name] = placeholder
	}
}

// staticPair is --static PREFIX=DIR.
type staticPair struct{}

func (staticPair) String() string { return "" }

func (staticPair) Set(text string) error {
	prefix, dir, ok := strings.Cut(text, "=")
	if !ok || !strings.HasPrefix(prefix, "/") || dir == "" {
		return errors.New("want PREFIX=DIR, e.g. /static=./public")
	}
	seedStatic = append(seedStatic, server.StaticMount{Route: prefix, Dir: dir})
	return nil
}

// idleTimeout is --idle-timeout: seconds (or a Go duration), 0 for never.
type idleTimeout time.Duration

// neverIdle stands for "never": a deadline past any connection's life.
const neverIdle = 100 * 365 * 24 * time.Hour

func (d *idleTimeout) String() string { return time.Duration(*d).String() }

func (d *idleTimeout) Set(text string) error {
	var v duration
	if err := v.Set(text); err != nil {
		return err
	}
	if v < 0 {
		return errors.New("must not be negative (0: never)")
	}
	if v == 0 {
		v = duration(neverIdle)
	}
	*d = idleTimeout(v)
	return nil
}

// seedStaticMounts adds the --static pairs to the configuration. A
// directory that is not there is a start-up failure (as the seed has
// it), checked here rather than as the flag is read, so that --doctor
// reports it.
func seedStaticMounts(cfg *server.Config, doctoring bool) error {
	for _, m := range seedStatic {
		if info, err := os.Stat(m.Dir); !doctoring && (err != nil || !info.IsDir()) {
			return &server.ConfigError{Flag: "static", Reason: fmt.Sprintf("%s=%s: not a directory", m.Route, m.Dir)}
		}
		cfg.StaticMounts = append(cfg.StaticMounts, m)
	}
	return nil
}

// seedAliases are the flags of ours a seed spelling sets.
var seedAliases = map[string]string{
	"interface": "protocol", "max-body-size": "max-body", "keepalive-timeout": "idle-timeout", "threads": "blocking-threads",
}

// nameAsGiven makes a configuration error name the flag as the user
// gave it: --protocol rather than --interface when only the seed's
// spelling was given.
func nameAsGiven(err error, fs *flag.FlagSet) {
	var cfgErr *server.ConfigError
	if !errors.As(err, &cfgErr) {
		return
	}
	alias, ok := seedAliases[cfgErr.Flag]
	if !ok {
		return
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given[alias] && !given[cfgErr.Flag] {
		cfgErr.Flag = alias
	}
}

// mountList is --mount PREFIX=SPEC, repeatable.
type mountList []server.Mount

func (l *mountList) String() string { return "" }

func (l *mountList) Set(text string) error {
	prefix, spec, ok := strings.Cut(text, "=")
	if !ok || !strings.HasPrefix(prefix, "/") || spec == "" {
		return errors.New("want PREFIX=SPEC, e.g. /api=api.main:app")
	}
	*l = append(*l, server.Mount{Prefix: prefix, Spec: spec})
	return nil
}

// firstMountedApp is the spec of the first --mount that serves an app
// (a PREFIX=hold mount serves none); validation refuses mounts without one.
func firstMountedApp(mounts []server.Mount) string {
	for _, m := range mounts {
		if m.Spec != server.HoldSpec {
			return m.Spec
		}
	}
	return mounts[0].Spec
}
