package server

import (
	"fmt"
	"sort"
	"strings"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/pybridge"
)

// Mount is one --mount PREFIX=SPEC: the app SPEC served under PREFIX,
// with PREFIX as its SCRIPT_NAME and stripped from its PATH_INFO (WSGI),
// or as its scope's root_path (ASGI).
type Mount struct {
	Prefix string // "/api"; "/" for the root
	Spec   string // module[:attr]
}

// mounted is a mount with its app loaded, or a hold mount's gate.
type mounted struct {
	prefix string // without a trailing slash; "" for the root
	app    *pybridge.App
	gate   *holdGate // --mount PREFIX=hold (app nil)
}

// mountTable routes a request to the app whose prefix is the longest that
// holds its path, by whole segments (/api holds /api and /api/x, not
// /apix). Read by the loop thread (a path no mount holds is 404 there)
// and the handler threads (which app a job calls).
type mountTable []mounted

// validateMounts checks --mount's prefixes.
func (c *Config) validateMounts() error {
	seen := map[string]bool{}
	apps := 0
	for _, m := range c.Mounts {
		prefix := strings.TrimRight(m.Prefix, "/")
		switch {
		case !strings.HasPrefix(m.Prefix, "/") || strings.ContainsAny(m.Prefix, "?#%"):
			return &ConfigError{Flag: "mount", Reason: fmt.Sprintf("%q: want PREFIX=SPEC with a path starting with /", m.Prefix+"="+m.Spec)}
		case m.Spec == "":
			return &ConfigError{Flag: "mount", Reason: fmt.Sprintf("%q: want PREFIX=SPEC, e.g. /api=api.main:app", m.Prefix+"=")}
		case seen[prefix]:
			return &ConfigError{Flag: "mount", Reason: fmt.Sprintf("%q: two apps at %s", m.Prefix+"="+m.Spec, m.Prefix)}
		}
		seen[prefix] = true
		if m.Spec == HoldSpec {
			if err := c.validateHoldMount(m); err != nil {
				return err
			}
		} else {
			apps++
		}
	}
	if len(c.Mounts) > 0 && apps == 0 {
		return &ConfigError{Flag: "mount", Reason: "every mount is PREFIX=hold: mount an app beside them (it issues the grants and publishes)"}
	}
	if len(c.Mounts) > 0 && c.Threads == 0 {
		return &ConfigError{Flag: "mount", Reason: "--threads 0 runs one app on the I/O thread: give --threads 1 or more"}
	}
	return nil
}

// loadMounts imports every mounted app, each with its prefix as its root
// path, and detects each one's protocol.
func loadMounts(cfg *Config, interp *pybridge.Interpreter, spec pybridge.AppSpec) (mountTable, error) {
	if cfg.Interface == "asgi" {
		return nil, &ConfigError{Flag: "mount", Reason: "--interface asgi with --mount: each mount's protocol is detected on its own; leave --interface auto"}
	}
	var table mountTable
	for _, m := range cfg.Mounts {
		s := spec
		s.Target, s.RootPath, s.RootInPath = m.Spec, strings.TrimRight(m.Prefix, "/"), true
		if m.Spec == HoldSpec {
			gate, err := newHoldGate(s.RootPath)
			if err != nil {
				table.close()
				return nil, &ConfigError{Flag: "mount", Reason: err.Error()}
			}
			table = append(table, mounted{prefix: s.RootPath, gate: gate})
			continue
		}
		app, err := interp.LoadApp(s)
		if err != nil {
			table.close()
			return nil, err
		}
		table = append(table, mounted{prefix: s.RootPath, app: app})
	}
	sort.SliceStable(table, func(i, j int) bool { return len(table[i].prefix) > len(table[j].prefix) })
	return table, nil
}

// asgiApps are the ASGI mounts' apps, the shortest prefix's first.
func (t mountTable) asgiApps() []*pybridge.App {
	var apps []*pybridge.App
	for i := len(t) - 1; i >= 0; i-- {
		if t[i].app != nil && t[i].app.Interface == pybridge.ASGI {
			apps = append(apps, t[i].app)
		}
	}
	return apps
}

// wsgiApps reports whether any mount is WSGI.
func (t mountTable) wsgiApps() bool {
	for i := range t {
		if t[i].app != nil && t[i].app.Interface != pybridge.ASGI {
			return true
		}
	}
	return false
}

// route is the app for path (nil: none holds it, or a hold mount).
func (t mountTable) route(path []byte) *pybridge.App {
	if m := t.find(path); m != nil {
		return m.app
	}
	return nil
}

// find is the mount that holds path (nil: none).
func (t mountTable) find(path []byte) *mounted {
	for i := range t {
		if under(path, t[i].prefix) {
			return &t[i]
		}
	}
	return nil
}

// first is the app of the last mount, the shortest prefix, that has one.
func (t mountTable) first() *pybridge.App {
	for i := len(t) - 1; i >= 0; i-- {
		if t[i].app != nil {
			return t[i].app
		}
	}
	return nil
}

// logAccess has the hold mounts log the streams they open.
func (t mountTable) logAccess(format *accessFormat, proxy *proxyTrust) {
	for i := range t {
		if t[i].gate != nil {
			t[i].gate.logFormat, t[i].gate.proxy = format, proxy
		}
	}
}

// close stops the hold mounts' goroutines.
func (t mountTable) close() {
	for i := range t {
		if t[i].gate != nil {
			t[i].gate.close()
		}
	}
}

// describe is "/api=api:app, /=site:application" for the start line.
func (t mountTable) describe() string {
	var parts []string
	for i := len(t) - 1; i >= 0; i-- {
		prefix := t[i].prefix
		if prefix == "" {
			prefix = "/"
		}
		spec := HoldSpec
		if t[i].app != nil {
			spec = t[i].app.Spec().Target
		}
		parts = append(parts, prefix+"="+spec)
	}
	return strings.Join(parts, ", ")
}

// mountRouter answers 404 on the loop thread for a path no mount holds;
// the rest go on to the app's handler, which calls the mount's app. With
// ASGI mounts beside WSGI ones, the ASGI apps' requests (WebSockets too)
// go to the executor's queue and the WSGI apps' to the handler threads'
// (wsgi).
type mountRouter struct {
	table mountTable
	next  loop.Handler
	// wsgi is the WSGI mounts' queue when the process serves both kinds
	// (else nil).
	wsgi *loop.JobQueue
}

func (r mountRouter) ServeInline(req *loop.Request, w *loop.ResponseWriter) {
	m := r.table.find(req.Bytes(req.Path))
	switch {
	case m == nil:
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.Respond(404, notMounted)
	case m.gate != nil:
		m.gate.serve(req, w)
	case r.wsgi != nil && m.app.Interface != pybridge.ASGI:
		w.DeferTo(r.wsgi)
	default:
		r.next.ServeInline(req, w)
	}
}

var notMounted = []byte("not found: no application is mounted here\n")
