package cli

import (
	"fmt"
	"net"
	"strconv"
)

// peerFlags point a uvicorn or gunicorn user from a flag m0serve does
// not have to what it has (README, Coming from uvicorn or gunicorn).
// Each is said after "unknown flag --NAME; ".
var peerFlags = map[string]string{
	// gunicorn
	"t":                        "gunicorn's --timeout is --worker-timeout (a worker whose loop stopped) or --request-timeout (a request stuck in the app)",
	"timeout":                  "gunicorn's --timeout is --worker-timeout (a worker whose loop stopped) or --request-timeout (a request stuck in the app)",
	"k":                        "no worker class to choose: WSGI or ASGI is detected (--interface), --threads N for gthread's threads",
	"worker-class":             "no worker class to choose: WSGI or ASGI is detected (--interface), --threads N for gthread's threads",
	"keep-alive":               "use --keepalive-timeout",
	"chdir":                    "use --app-dir DIR (first on sys.path)",
	"pythonpath":               "use --app-dir DIR (first on sys.path)",
	"access-logfile":           "use --access-log-file FILE",
	"access-logformat":         "use --access-log-format FORMAT (gunicorn's atoms)",
	"error-logfile":            "use --error-log-file FILE",
	"log-file":                 "use --error-log-file FILE",
	"p":                        "use --pid-file FILE",
	"pid":                      "use --pid-file FILE",
	"worker-connections":       "use --limit-concurrency N (503 beyond) or --max-connections N (accepting pauses)",
	"limit-request-line":       "use --max-head-size BYTES (the whole head)",
	"limit-request-field_size": "use --max-head-size BYTES (the whole head)",
	"limit-request-field-size": "use --max-head-size BYTES (the whole head)",
	"limit-request-fields":     "use --max-fields N",
	"reuse-port":               "with --workers, --listener reuseport (the default) gives each worker its own socket",
	"reload-extra-file":        "use --reload-include GLOB",
	"capture-output":           "Python's stderr goes to the server's log (--error-log-file) already",
	"preload":                  "not needed: each worker imports the app itself",
	"statsd-host":              "use --metrics-address HOST:PORT (Prometheus)",
	"c":                        "no configuration file: flags and M0_* environment variables",
	"config":                   "no configuration file: flags and M0_* environment variables",
	"e":                        "no -e: set M0_* environment variables, or the app's own, before m0serve",
	"env":                      "no -e: set M0_* environment variables, or the app's own, before m0serve",
	"D":                        "no daemon mode: run it under systemd or in a container",
	"daemon":                   "no daemon mode: run it under systemd or in a container",
	"u":                        "no user switch: run it under systemd (User=) or in a container",
	"user":                     "no user switch: run it under systemd (User=) or in a container",
	"g":                        "no group switch: run it under systemd (Group=) or in a container",
	"group":                    "no group switch: run it under systemd (Group=) or in a container",
	"keyfile":                  "use --ssl-keyfile FILE",
	"certfile":                 "use --ssl-certfile FILE",
	"ca-certs":                 "use --ssl-ca-certs FILE",
	"cert-reqs":                "use --ssl-cert-reqs N",
	"ciphers":                  "use --ssl-ciphers LIST",
	"proxy-protocol":           "no PROXY protocol yet: --proxy-headers reads Forwarded and X-Forwarded-For",
	// uvicorn
	"h11-max-incomplete-event-size": "use --max-head-size BYTES",
	"use-colors":                    "no colours: the log is plain text (or --log-format json)",
	"no-use-colors":                 "no colours: the log is plain text (or --log-format json)",
	"timeout-worker-healthcheck":    "use --worker-timeout DURATION",
	"no-proxy-headers":              "proxy headers are believed only with --proxy-headers",
	"reload-delay":                  "--reload waits for changes to settle (200 ms) by itself",
	"server-header":                 "the Server field is on unless --no-server-header",
	"date-header":                   "the Date field is on unless --no-date-header",
}

// checkHost refuses a --host that carries a port, as uvicorn users
// write it after gunicorn's -b: the port goes in --port.
func checkHost(host string) error {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return nil // a host, or an IPv6 address without brackets
	}
	if _, err := strconv.Atoi(port); err != nil {
		return nil
	}
	return fmt.Errorf("--host %s: the port goes in --port: --host %s --port %s (or -b %s)", host, h, port, host)
}
