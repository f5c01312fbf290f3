package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/m0serve/m0serve/grant"
	"github.com/m0serve/m0serve/realtime"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/m0serve/m0serve/pybridge"
	"github.com/m0serve/m0serve/server"
	"golang.org/x/sys/unix"
)

// --doctor reports the configuration as one JSON object and exits with
// the status a start would end with, without binding or serving: the
// platform, the interpreter (started, as a start would, and the app
// imported to learn its protocol), the resolved topology, and every
// start-up check with its fix. The statuses are the seed's: 2 for a
// usage mistake, 78 (EX_CONFIG) for a value the configuration refuses,
// 1 for what stops a start (a directory, the interpreter, the app). The
// server itself exits 2 for the configuration's refusals too; the
// report keeps the seed's classes, so a script written for it reads
// both (README, "Coming from the Mojo m0serve").

// Exit statuses of the report.
const (
	doctorUsage   = 2
	doctorStartup = 1
	doctorConfig  = 78
)

type doctorCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	Exit   int    `json:"exit,omitempty"`
}

type doctorReport struct {
	Version     string         `json:"m0serve"`
	OK          bool           `json:"ok"`
	Exit        int            `json:"exit"`
	Build       map[string]any `json:"build"`
	Platform    map[string]any `json:"platform"`
	Python      map[string]any `json:"python"`
	Topology    map[string]any `json:"topology"`
	Application map[string]any `json:"application"`
	Server      map[string]any `json:"server"`
	Checks      []doctorCheck  `json:"checks"`
}

func (r *doctorReport) pass(name, detail string) {
	r.Checks = append(r.Checks, doctorCheck{Name: name, OK: true, Detail: detail})
}

func (r *doctorReport) fail(name string, exit int, detail, fix string) {
	r.Checks = append(r.Checks, doctorCheck{Name: name, Detail: detail, Fix: fix, Exit: exit})
	if r.Exit == 0 {
		r.Exit = exit
	}
}

// runDoctor builds and prints the report; its status is the first failed
// check's, in the order a start meets them.
func runDoctor(cfg server.Config, fs *flag.FlagSet, apps []string, stdout, stderr io.Writer) int {
	r := &doctorReport{
		Version:     releaseVersion(version, buildInfo()),
		Build:       map[string]any{"version": releaseVersion(version, buildInfo()), "commit": buildCommit(commit, buildInfo()), "os": runtime.GOOS, "arch": runtime.GOARCH, "go": runtime.Version(), "backends": server.Backends()},
		Platform:    platformFacts(),
		Python:      map[string]any{"embedded": pybridge.Version(), "library": pybridge.LibraryVersion()},
		Application: map[string]any{"requested": len(apps) > 0},
	}
	switch {
	case len(cfg.Mounts) > 0 && len(apps) > 0:
		r.fail("application-spec", doctorUsage, "--mount and the application "+quoteAll(apps), "give one app, or mount each")
	case len(cfg.Mounts) > 0:
		cfg.App = firstMountedApp(cfg.Mounts)
		r.Application["requested"] = true
		r.pass("application-spec", fmt.Sprintf("%d mounts", len(cfg.Mounts)))
	case len(apps) == 0 && cfg.Native == "":
		r.fail("application-spec", doctorUsage, "no application given", "give MODULE[:ATTR], e.g. `m0serve main:app` (or --native NAME)")
	case len(apps) > 1:
		r.fail("application-spec", doctorUsage, "one application at a time: got "+quoteAll(apps), "give one MODULE[:ATTR]")
	case len(apps) == 1:
		cfg.App = apps[0]
		r.Application["spec"] = cfg.App
		r.pass("application-spec", cfg.App)
	default:
		r.Application["native"] = cfg.Native
		r.pass("application-spec", "--native "+cfg.Native)
	}
	if err := checkHost(cfg.Host); err != nil {
		r.fail("address", doctorUsage, err.Error(), "give the port with --port")
	} else {
		r.pass("address", fmt.Sprintf("%s:%d", cfg.Host, cfg.Port))
	}
	if err := pairStaticMounts(&cfg); err != nil {
		r.fail("static", doctorUsage, err.Error(), "give one --static-path-route per --static-path-mount, or --static PREFIX=DIR")
	}
	if err := workersFromEnv(fs); err != nil {
		r.fail("workers", doctorUsage, err.Error(), "set WEB_CONCURRENCY to a number of workers, or give --workers")
	}
	startable := doctorDirectories(r, &cfg)
	doctorConfiguration(r, &cfg, fs)
	r.Topology = topology(&cfg)
	r.Server = serverFacts(&cfg)
	if cfg.App != "" && startable {
		doctorPython(r, &cfg, stdout)
	}
	r.OK = r.Exit == 0
	out, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintf(stderr, "m0serve: --doctor: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return r.Exit
}

// doctorDirectories checks what must exist for a start: the app
// directory, the static directories, the virtualenv. False: the app
// cannot be imported from where it was said to be.
func doctorDirectories(r *doctorReport, cfg *server.Config) bool {
	ok := true
	if cfg.App != "" {
		dir := cfg.AppDir
		if dir == "" {
			dir = "."
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			r.fail("app-dir", doctorStartup, "app dir does not exist: "+dir, "create it, or give --app-dir the directory holding "+cfg.App)
			ok = false
		} else {
			r.pass("app-dir", dir+" exists")
		}
	}
	for _, m := range cfg.StaticMounts {
		if info, err := os.Stat(m.Dir); err != nil || !info.IsDir() {
			r.fail("static-dir", doctorStartup, "static dir does not exist: "+m.Dir, "create it, or drop the mount at "+m.Route)
		} else {
			r.pass("static-dir", m.Route+" serves "+m.Dir)
		}
	}
	if err := checkHostedVenv(cfg.Venv); err != nil {
		r.fail("venv", doctorStartup, err.Error(), "drop --venv: the interpreter that imports m0serve is the environment")
		ok = false
	}
	return ok
}

// doctorConfiguration runs the validation a start runs (the server's,
// and the master's with --workers).
func doctorConfiguration(r *doctorReport, cfg *server.Config, fs *flag.FlagSet) {
	cfg.Given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { cfg.Given[f.Name] = true })
	var err error
	if master.Workers != 0 {
		m := master
		m.Server = masterServer{cfg}
		err = m.Validate()
	} else if err = cfg.Validate(); err == nil {
		if name := masterOnlyFlag(fs); name != "" {
			err = &server.ConfigError{Flag: name, Reason: "applies to worker processes: give --workers N too"}
		}
	}
	nameAsGiven(err, fs)
	var cfgErr *server.ConfigError
	switch {
	case err == nil:
		r.pass("configuration", "every flag's value is accepted")
	case errors.As(err, &cfgErr) && cfgErr.Flag == "static-path-mount" && r.Exit != 0:
		// The directory check above said it.
	case errors.As(err, &cfgErr) && cfgErr.Flag != "":
		r.fail("configuration", doctorConfig, err.Error(), "change --"+cfgErr.Flag+" (or its M0_"+strings.ToUpper(strings.ReplaceAll(cfgErr.Flag, "-", "_"))+")")
	default:
		r.fail("configuration", doctorConfig, err.Error(), "see --help")
	}
}

// doctorPython starts the interpreter and imports the app, as a start
// does, with Python's standard output sent to standard error meanwhile:
// what the app prints at import must not mix with the report.
func doctorPython(r *doctorReport, cfg *server.Config, stdout io.Writer) {
	if err := checkPythonVersion(cfg.Venv); err != nil {
		r.fail("interpreter", doctorStartup, err.Error(), "run m0serve with the CPython it was built for, or give --venv a virtualenv of it")
		return
	}
	if stdout == os.Stdout {
		if saved, err := unix.Dup(1); err == nil {
			unix.Dup2(2, 1)
			defer func() {
				unix.Dup2(saved, 1)
				unix.Close(saved)
			}()
		}
	}
	interp, err := pybridge.Start(pybridge.Config{AppDir: cfg.AppDir, VirtualEnv: cfg.Venv})
	if err != nil {
		r.fail("interpreter", doctorStartup, err.Error(), "check --venv and the Python m0serve embeds")
		return
	}
	defer interp.Close()
	if facts, err := interp.Facts(); err == nil {
		var python map[string]any
		if json.Unmarshal([]byte(facts), &python) == nil {
			for k, v := range python {
				r.Python[k] = v
			}
		}
		r.pass("interpreter", fmt.Sprintf("%v %v (%v)", python["implementation"], python["version"], python["executable"]))
	} else {
		r.pass("interpreter", "started; "+err.Error())
	}
	// The modules a start provides before the app imports (the app may
	// import them at its top): m0pub without its bus, and grant.
	if err := interp.ProvidePublisher(pybridge.Publisher{Source: realtime.PublisherSource}); err != nil {
		r.fail("interpreter", doctorStartup, err.Error(), "check the Python m0serve embeds")
	}
	if err := interp.ProvideModule("grant", grant.Source); err != nil {
		r.fail("interpreter", doctorStartup, err.Error(), "check the Python m0serve embeds")
	}
	if len(cfg.Mounts) > 0 {
		doctorMounts(r, cfg, interp)
		return
	}
	app, err := interp.LoadApp(pybridge.AppSpec{Target: cfg.App, Factory: cfg.Factory, RootPath: cfg.RootPath, ServerName: cfg.Host, ServerPort: cfg.Port})
	if err != nil {
		detail := err.Error()
		var target *pybridge.TargetError
		if !errors.As(err, &target) {
			detail = loadErrorLine(err)
		}
		r.fail("application", doctorStartup, detail,
			"check --app-dir and the MODULE[:ATTR]; a bare MODULE takes its application or app, else MODULE.asgi:application, MODULE.wsgi:application or MODULE.main:app")
		return
	}
	protocol := app.Interface.String()
	forced := cfg.Interface != "auto"
	if forced {
		protocol = cfg.Interface
	}
	r.Application["spec"] = app.Spec().Target
	r.Application["protocol"] = protocol
	r.Application["detected"] = app.Interface.String()
	r.Application["protocol_forced"] = forced
	r.Topology["protocol"] = protocol
	r.pass("application", app.Spec().Target+" imports and classifies as "+protocol)
}

// loadErrorLine is the last line of a load error's traceback: the
// exception itself.
func loadErrorLine(err error) string {
	text := strings.TrimSpace(err.Error())
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		return strings.SplitN(text, "\n", 2)[0] + " " + strings.TrimSpace(text[i+1:])
	}
	return text
}

func platformFacts() map[string]any {
	facts := map[string]any{"os": runtime.GOOS, "arch": runtime.GOARCH, "cpus": runtime.NumCPU()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		facts["kernel"] = unix.ByteSliceToString(u.Release[:])
		facts["machine"] = unix.ByteSliceToString(u.Machine[:])
	}
	return facts
}

// topology is how the start would run: processes, threads, where the
// app runs.
func topology(cfg *server.Config) map[string]any {
	workers := master.Workers
	t := map[string]any{
		"mode": "single", "workers": max(workers, 1), "threads": cfg.Threads, "cpus": runtime.NumCPU(),
		"backend": cfg.Backend, "max_connections": cfg.MaxConnections, "asgi_thread": cfg.ASGIThread,
		"loop": cfg.Loop, "interface": cfg.Interface,
	}
	if workers > 0 {
		t["mode"] = "workers"
		t["listener"] = master.Listener
		// A worker whose handler threads are all taken passes new
		// connections to a sibling with one free (WSGI, --threads 1+).
		t["handoff"] = workers >= 2 && cfg.Threads > 0
	}
	// --wsgi-inline auto runs quick requests on the I/O thread with one
	// handler thread, unless a sibling takes what it cannot.
	t["wsgi_inline"] = cfg.Threads == 0 || cfg.Threads == 1 && cfg.WSGIInline == "auto" && cfg.RequestTimeout == 0 && workers < 2
	return t
}

func serverFacts(cfg *server.Config) map[string]any {
	static := []map[string]string{}
	for _, m := range cfg.StaticMounts {
		static = append(static, map[string]string{"prefix": m.Route, "dir": m.Dir})
	}
	headers := map[string]string{"x-content-type-options": "nosniff"}
	for _, h := range cfg.StaticHeaders {
		if name, value, ok := strings.Cut(h, ":"); ok {
			headers[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(value)
		}
	}
	metricsPath := ""
	if cfg.Metrics {
		metricsPath = server.MetricsPath
	}
	return map[string]any{
		"host": cfg.Host, "port": cfg.Port, "uds": cfg.UDS, "app_dir": cfg.AppDir, "root_path": cfg.RootPath,
		"health_path": cfg.HealthPath, "metrics": cfg.Metrics, "metrics_path": metricsPath, "metrics_address": cfg.MetricsAddress,
		"max_body": cfg.MaxBodySize, "max_keepalive_requests": cfg.MaxKeepAliveRequests,
		"keepalive_timeout_s": cfg.KeepAliveTimeout.Seconds(), "header_timeout_s": cfg.HeaderTimeout.Seconds(),
		"static": static, "static_cache_control": cfg.StaticCacheControl, "static_headers": headers,
		"static_svg_policy": server.StaticSVGPolicy, "tls": cfg.TLS.CertFile != "", "http": cfg.HTTP,
	}
}

// doctorMounts imports each --mount's app, as a start does: each must
// import; the protocol is theirs ("wsgi", "asgi", or "mixed").
func doctorMounts(r *doctorReport, cfg *server.Config, interp *pybridge.Interpreter) {
	var mounts []map[string]string
	seen := map[string]bool{}
	for _, m := range cfg.Mounts {
		if m.Spec == server.HoldSpec {
			mounts = append(mounts, map[string]string{"prefix": m.Prefix, "spec": m.Spec, "protocol": "hold"})
			r.pass("mount", m.Prefix+"=hold: streams opened with grants "+grant.KeyEnv+" verifies")
			continue
		}
		app, err := interp.LoadApp(pybridge.AppSpec{Target: m.Spec, Factory: cfg.Factory, RootPath: strings.TrimRight(m.Prefix, "/"), ServerName: cfg.Host, ServerPort: cfg.Port})
		if err != nil {
			r.fail("mount", doctorStartup, m.Prefix+"="+m.Spec+": "+loadErrorLine(err), "check --app-dir and the mount's MODULE[:ATTR]")
			continue
		}
		protocol := app.Interface.String()
		mounts = append(mounts, map[string]string{"prefix": m.Prefix, "spec": app.Spec().Target, "protocol": protocol})
		seen[protocol] = true
		r.pass("mount", m.Prefix+"="+app.Spec().Target+" imports and classifies as "+protocol)
	}
	protocol := "wsgi"
	switch {
	case len(seen) > 1:
		protocol = "mixed"
	case seen["asgi"]:
		protocol = "asgi"
	}
	r.Application["mounts"] = mounts
	r.Application["protocol"] = protocol
	r.Topology["protocol"] = protocol
}
