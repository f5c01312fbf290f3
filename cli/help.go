package cli

import (
	"flag"
	"fmt"
	"io"
)

// helpGroups orders --help: the flags of one concern together, in the
// order a user looks for them. TestHelpGroups checks that every flag is
// in one group.
var helpGroups = []struct {
	title string
	flags []string
}{
	{"General", []string{"help", "version"}},
	{"Server", []string{"bind", "host", "port", "uds", "uds-mode", "fd", "backlog", "backend",
		"proxy-headers", "forwarded-allow-ips", "forwarded-headers", "header", "no-server-header", "no-date-header"}},
	{"Application", []string{"app-dir", "venv", "env-file", "factory", "interface", "root-path", "native",
		"threads", "wsgi-inline", "max-client-waits", "loop", "lifespan", "asgi-thread",
		"reload", "reload-dir", "reload-include", "reload-exclude"}},
	{"Workers", []string{"workers", "listener", "worker-timeout", "request-timeout", "max-requests",
		"max-requests-jitter", "max-worker-lifetime", "max-worker-rss", "rss-check-interval", "pid-file"}},
	{"Timeouts and limits", []string{"header-timeout", "body-timeout", "keepalive-timeout", "send-timeout",
		"graceful-timeout", "body-min-rate", "max-body-size", "max-head-size", "max-fields",
		"max-connections", "max-connections-per-ip", "limit-concurrency"}},
	{"Logging", []string{"log-level", "log-format", "log-config", "access-log", "access-log-file", "access-log-format", "error-log-file"}},
	{"Static files", []string{"static-path-mount", "static-path-route", "static-path-expires", "static-path-dotfiles"}},
	{"Metrics", []string{"metrics-address"}},
	{"WebSocket", []string{"ws", "ws-max-size", "ws-max-queue", "ws-ping-interval", "ws-ping-timeout", "ws-per-message-deflate"}},
	{"TLS", []string{"ssl-certfile", "ssl-keyfile", "ssl-keyfile-password", "ssl-ca-certs", "ssl-cert-reqs",
		"ssl-ciphers", "ssl-protocol-min"}},
	{"HTTP/2", []string{"http", "http2-max-concurrent-streams", "http2-initial-window-size",
		"http2-max-frame-size", "http2-max-header-list-size"}},
	{"Realtime", []string{"realtime", "replay-frames", "pg-listen"}},
}

// shortNames are the one-letter spellings gunicorn users type (-h is
// Go's and everyone's); parseArgs reads them as the long flag.
var shortNames = map[string]string{"h": "help", "V": "version", "w": "workers", "b": "bind"}

// placeholders name what a flag takes, for --help; a flag not here is
// a boolean. DURATION and BYTES are explained above the groups.
var placeholders = map[string]string{
	"bind": "HOST:PORT", "host": "HOST", "port": "PORT", "uds": "PATH", "uds-mode": "MODE", "fd": "FD",
	"backlog": "N", "backend": "auto|uring|epoll|kqueue", "forwarded-allow-ips": "ADDRESSES",
	"forwarded-headers": "x-forwarded|forwarded",
	"header":            "NAME:VALUE", "app-dir": "DIR", "venv": "DIR", "env-file": "FILE", "interface": "auto|wsgi|asgi",
	"root-path": "PATH", "native": "NAME", "threads": "N", "wsgi-inline": "auto|off",
	"max-client-waits": "N", "replay-frames": "N", "pg-listen": "URL", "loop": "auto|asyncio|uvloop", "lifespan": "auto|on|off",
	"asgi-thread": "auto|loop|executor", "reload-dir": "DIR", "reload-include": "GLOB",
	"reload-exclude": "GLOB", "workers": "N", "listener": "reuseport|shared",
	"worker-timeout": "DURATION", "request-timeout": "DURATION", "max-requests": "N",
	"max-requests-jitter": "N", "max-worker-lifetime": "DURATION", "max-worker-rss": "MIB",
	"rss-check-interval": "DURATION", "pid-file": "FILE", "header-timeout": "DURATION",
	"body-timeout": "DURATION", "keepalive-timeout": "DURATION", "send-timeout": "DURATION",
	"graceful-timeout": "DURATION", "body-min-rate": "BYTES", "max-body-size": "BYTES",
	"max-head-size": "BYTES", "max-fields": "N", "max-connections": "N", "max-connections-per-ip": "N",
	"limit-concurrency": "N", "log-level": "LEVEL", "log-format": "text|json", "access-log-file": "FILE",
	"access-log-format": "FORMAT", "error-log-file": "FILE", "log-config": "FILE", "static-path-mount": "DIR",
	"static-path-route": "PATH", "static-path-expires": "DURATION", "metrics-address": "HOST:PORT",
	"ws": "auto|none", "ws-max-size": "BYTES", "ws-max-queue": "N", "ws-ping-interval": "DURATION",
	"ws-ping-timeout": "DURATION", "ssl-certfile": "FILE", "ssl-keyfile": "FILE",
	"ssl-keyfile-password": "PASSWORD", "ssl-ca-certs": "FILE", "ssl-cert-reqs": "0|1|2",
	"ssl-ciphers": "LIST", "ssl-protocol-min": "tls1.2|tls1.3",
	"http": "auto|1|2", "http2-max-concurrent-streams": "N", "http2-initial-window-size": "BYTES",
	"http2-max-frame-size": "BYTES", "http2-max-header-list-size": "BYTES",
}

func usage(w io.Writer, fs *flag.FlagSet, options []option) {
	fmt.Fprintf(w, "Usage: m0serve [flags] module[:attr] [flags]\n")
	fmt.Fprintf(w, "       m0serve [flags] --native NAME\n\n")
	fmt.Fprintf(w, "Serves the WSGI or ASGI app attr of the Python module (e.g. myproject.wsgi:application, main:app);\n")
	fmt.Fprintf(w, "without :attr, the module's application, else its app. A function that makes the app wants --factory.\n")
	fmt.Fprintf(w, "Every flag can also be set by its environment variable; the flag wins. \"--\" ends the flags.\n")
	fmt.Fprintf(w, "A DURATION is seconds (30) or a Go duration (30s, 500ms); BYTES take K, M or G (10M).\n")
	envOf := map[string]string{}
	for _, o := range options {
		envOf[o.name] = o.env
	}
	short := map[string]string{}
	for s, long := range shortNames {
		short[long] = s
	}
	for _, group := range helpGroups {
		fmt.Fprintf(w, "\n%s:\n", group.title)
		for _, name := range group.flags {
			if name == "help" {
				fmt.Fprintf(w, "  -h, --help\n      print this help and exit\n")
				continue
			}
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			fmt.Fprint(w, "  ")
			if s := short[name]; s != "" {
				fmt.Fprintf(w, "-%s, ", s)
			}
			fmt.Fprintf(w, "--%s", name)
			if p := placeholders[name]; p != "" {
				fmt.Fprintf(w, " %s", p)
			}
			if env := envOf[name]; env != "" {
				fmt.Fprintf(w, " (env %s)", env)
			}
			fmt.Fprintf(w, "\n      %s", f.Usage)
			if f.DefValue != "" && f.DefValue != "false" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprint(w, peerSpellingsHelp())
}
