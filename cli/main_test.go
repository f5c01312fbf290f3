package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/m0serve/m0serve/server"
)

func TestSizeValues(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"512K", 512 << 10, true},
		{"10m", 10 << 20, true},
		{"2G", 2 << 30, true},
		{"", 0, false},
		{"K", 0, false},
		{"-1", 0, false},
		{"1.5M", 0, false},
		{"99999999999G", 0, false},
	}
	for _, tc := range cases {
		var s size
		err := s.Set(tc.in)
		if (err == nil) != tc.ok || tc.ok && int64(s) != tc.want {
			t.Errorf("size %q: %d, %v; want %d ok=%v", tc.in, s, err, tc.want, tc.ok)
		}
	}
}

func TestDurationValues(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30s", 30 * time.Second, true},
		{"500ms", 500 * time.Millisecond, true},
		{"2", 2 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"soon", 0, false},
	}
	for _, tc := range cases {
		var d duration
		err := d.Set(tc.in)
		if (err == nil) != tc.ok || tc.ok && time.Duration(d) != tc.want {
			t.Errorf("duration %q: %v, %v; want %v ok=%v", tc.in, time.Duration(d), err, tc.want, tc.ok)
		}
	}
}

func TestRunExitStatus(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		env    map[string]string
		status int
		output string
	}{
		{"help", []string{"--help"}, nil, 0, "--max-body-size BYTES (env M0_MAX_BODY_SIZE)"},
		{"-h", []string{"-h"}, nil, 0, "\nTimeouts and limits:\n  --header-timeout DURATION (env M0_HEADER_TIMEOUT)\n"},
		{"-V", []string{"-V"}, nil, 0, "m0serve "},
		{"help: placeholders", []string{"--help"}, nil, 0, "\n  --access-log-file FILE (env M0_ACCESS_LOG_FILE)\n"},
		{"help: short names", []string{"--help"}, nil, 0, "\n  -w, --workers N (env M0_WORKERS)\n"},
		{"gunicorn's --timeout", []string{"--timeout", "30", "app:application"}, nil, 2, "unknown flag --timeout; gunicorn's --timeout is --worker-timeout (a worker whose loop stopped) or --request-timeout"},
		{"gunicorn's -t", []string{"-t", "30", "app:application"}, nil, 2, "unknown flag -t; gunicorn's --timeout is --worker-timeout"},
		{"gunicorn's -k", []string{"-k", "gevent", "app:application"}, nil, 2, "unknown flag -k; no worker class to choose"},
		{"uvicorn's --use-colors", []string{"--use-colors"}, nil, 2, "unknown flag --use-colors; no colours"},
		{"gunicorn's --certfile", []string{"--certfile", "c.pem"}, nil, 2, "unknown flag --certfile; use --ssl-certfile FILE"},
		{"host with a port", []string{"--host", "0.0.0.0:8000", "app:application"}, nil, 2, "m0serve: --host 0.0.0.0:8000: the port goes in --port: --host 0.0.0.0 --port 8000 (or -b 0.0.0.0:8000)"},
		{"M0_HOST with a port", []string{"app:application"}, map[string]string{"M0_HOST": "[::1]:9000"}, 2, "--host [::1]:9000: the port goes in --port: --host ::1 --port 9000"},
		{"-b with --port", []string{"-b", "127.0.0.1:8001", "app:application", "--port", "9000"}, nil, 2, "m0serve: -b and --port: one address, given once: -b HOST:PORT (or unix:PATH, fd://N) alone, or --host and --port\n"},
		{"--bind= with --host=", []string{"--host=::1", "--bind=127.0.0.1:8001", "app:application"}, nil, 2, "m0serve: --bind and --host: one address"},
		{"-b with --uds", []string{"--uds", "/tmp/s", "-b", "127.0.0.1:8001", "app:application"}, nil, 2, "m0serve: -b and --uds: one address"},
		{"-b twice", []string{"-b", "127.0.0.1:1", "--bind", "127.0.0.1:2", "app:application"}, nil, 2, `--bind "127.0.0.1:2": one address at a time`},
		{"-b nonsense", []string{"-b", "a:b:c", "app:application"}, nil, 2, `-b "a:b:c": want HOST:PORT`},
		{"-b bad port", []string{"-b", "127.0.0.1:http", "app:application"}, nil, 2, `-b "127.0.0.1:http": port "http": want a number`},
		{"-w from gunicorn", []string{"-w", "x", "app:application"}, nil, 2, `-w "x": want a whole number`},
		{"version", []string{"--version"}, nil, 0, "m0serve "},
		{"unknown flag", []string{"--nope"}, nil, 2, "-nope"},
		{"env error names the flag", nil, map[string]string{"M0_MAX_CONNECTIONS": "many"}, 2, "--max-connections"},
		{"env applies", []string{"--native", "hello"}, map[string]string{"M0_BACKEND": "bogus"}, 2, "--backend"},
		{"flag wins over env", []string{"--native", "nope"}, map[string]string{"M0_NATIVE": "hello"}, 2, "--native"},
		{"help: the access log's default", []string{"--help"}, nil, 0, "off unless given, unlike uvicorn, for its CPU cost (bench/README.md, The access log's cost)"},
		{"help names the app", []string{"--help"}, nil, 0, "m0serve [flags] module[:attr] [flags]"},
		{"help points to the threads trade-offs", []string{"--help"}, nil, 0, "README, Threads"},
		{"interface checked", []string{"--interface", "asgix", "app:application"}, nil, 2, `--interface: "asgix": want auto, wsgi or asgi`},
		{"loop from env", []string{"app:application"}, map[string]string{"M0_LOOP": "trio"}, 2, `--loop: "trio": want auto, asyncio or uvloop`},
		{"lifespan from env", []string{"app:application"}, map[string]string{"M0_LIFESPAN": "maybe"}, 2, `--lifespan: "maybe": want auto, on or off`},
		{"flag wins over lifespan env", []string{"--lifespan", "bogus", "app:application"}, map[string]string{"M0_LIFESPAN": "on"}, 2, `--lifespan: "bogus"`},
		{"help lists the ASGI flags", []string{"--help"}, nil, 0, "--lifespan auto|on|off (env M0_LIFESPAN)"},
		{"asgi-thread checked", []string{"app:application"}, map[string]string{"M0_ASGI_THREAD": "both"}, 2, `--asgi-thread: "both": want auto, loop or executor`},
		{"asgi-thread loop leaves no thread for the 504", []string{"--asgi-thread", "loop", "--workers", "1", "--request-timeout", "5", "app:application"}, nil, 2, `--asgi-thread: "loop": --request-timeout needs the I/O thread free`},
		{"asgi-thread loop is asyncio's", []string{"--asgi-thread", "loop", "--loop", "uvloop", "app:application"}, nil, 2, `--asgi-thread: "loop" steps asyncio's event loop; --loop uvloop needs --asgi-thread executor`},
		{"threads from env", []string{"app:application"}, map[string]string{"M0_THREADS": "-1"}, 2, "--threads: -1"},
		{"bool env", []string{"app:application"}, map[string]string{"M0_FACTORY": "maybe"}, 2, "--factory"},
		{"access-log env", []string{"app:application"}, map[string]string{"M0_ACCESS_LOG": "1", "M0_ROOT_PATH": "x"}, 2, "--root-path"},
		{"two apps", []string{"a:b", "c:d"}, nil, 2, `one application at a time: got "a:b", "c:d"`},
		{"flag after the app", []string{"app:application", "--loop", "trio"}, nil, 2, `--loop: "trio"`},
		{"flags on both sides", []string{"--threads", "2", "app:application", "--root-path", "x"}, nil, 2, "--root-path"},
		{"-- ends the flags", []string{"--", "app:application", "--loop"}, nil, 2, `got "app:application", "--loop"`},
		{"no application", nil, nil, 2, "m0serve: no application: give module:attr, e.g. `m0serve main:app`"},
		{"unknown flag as typed", []string{"--prot", "9001", "app:application"}, nil, 2, "unknown flag --prot; did you mean --port?"},
		{"unknown single-dash flag", []string{"-acess-log"}, nil, 2, "unknown flag -acess-log; did you mean --access-log?"},
		{"unknown flag with a value", []string{"--max-body-siz=10M"}, nil, 2, "unknown flag --max-body-siz; did you mean --max-body-size?"},
		{"no suggestion for another word", []string{"--quic-bind"}, nil, 2, "unknown flag --quic-bind (see --help)"},
		{"boolean flag then a word", []string{"--access-log", "ON", "app:application"}, nil, 2, "--access-log ON: write --access-log=ON"},
		{"flag without its value", []string{"app:application", "--port"}, nil, 2, "--port: wants a value"},
		{"number expected", []string{"--port", "x", "app:application"}, nil, 2, `--port "x": want a whole number`},
		{"bool flag value", []string{"--access-log=maybe", "app:application"}, nil, 2, `--access-log "maybe": want true or false`},
		{"bool env yes", []string{"app:application"}, map[string]string{"M0_ACCESS_LOG": "Yes", "M0_ROOT_PATH": "x"}, 2, "--root-path"},
		{"bool env off", []string{"app:application"}, map[string]string{"M0_FACTORY": "OFF", "M0_ROOT_PATH": "x"}, 2, "--root-path"},
		{"metrics address, one process", []string{"--native", "hello", "--port", "0", "--metrics-address", "bad"}, nil, 2, "--metrics-address: bad"},
		{"metrics address from env", []string{"--native", "hello", "--port", "0"}, map[string]string{"M0_METRICS_ADDRESS": "127.0.0.1:99999"}, 2, "--metrics-address: 127.0.0.1:99999"},
		{"help: metrics without --workers", []string{"--help"}, nil, 0, "--metrics-address HOST:PORT (env M0_METRICS_ADDRESS)\n      serve Prometheus metrics at http://HOST:PORT/metrics (the master's with --workers"},
		{"forwarded-headers from env", []string{"--native", "hello", "--proxy-headers"}, map[string]string{"M0_FORWARDED_HEADERS": "both"}, 2, `--forwarded-headers: "both": want x-forwarded or forwarded`},
		{"bool env typo", []string{"app:application"}, map[string]string{"M0_ACCESS_LOG": "t"}, 2, `M0_ACCESS_LOG="t" (for --access-log): want true or false`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			status := run(tc.args, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if status != tc.status || !strings.Contains(out, tc.output) {
				t.Fatalf("status %d, output %q; want %d and %q", status, out, tc.status, tc.output)
			}
			if status == 2 && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
				t.Fatalf("want one line, got %q", stderr.String())
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	cases := []struct {
		args      []string
		apps      []string
		threads   int
		accessLog bool
	}{
		{[]string{"main:app", "--threads", "4"}, []string{"main:app"}, 4, false},
		{[]string{"--threads=4", "main:app", "--access-log"}, []string{"main:app"}, 4, true},
		{[]string{"-threads", "4", "main", "-access-log=no"}, []string{"main"}, 4, false},
		{[]string{"--access-log", "main:app"}, []string{"main:app"}, 1, true},
		{[]string{"--", "--threads", "4"}, []string{"--threads", "4"}, 1, false},
		{[]string{"main:app", "-", "--access-log=1"}, []string{"main:app", "-"}, 1, true},
	}
	for _, tc := range cases {
		cfg := server.Defaults
		fs, _ := newFlagSet(&cfg)
		apps, err := parseArgs(fs, tc.args)
		if err != nil || !slices.Equal(apps, tc.apps) || cfg.Threads != tc.threads || cfg.AccessLog != tc.accessLog {
			t.Errorf("%q: apps %q threads %d access log %v, %v; want %q %d %v",
				tc.args, apps, cfg.Threads, cfg.AccessLog, err, tc.apps, tc.threads, tc.accessLog)
		}
	}
}

func TestBooleanValues(t *testing.T) {
	for value, want := range map[string]bool{
		"1": true, "true": true, "TRUE": true, "yes": true, "Yes": true, "on": true, "ON": true,
		"0": false, "false": false, "False": false, "no": false, "NO": false, "off": false, "Off": false,
	} {
		cfg := server.Defaults
		cfg.AccessLog = !want
		fs, _ := newFlagSet(&cfg)
		if err := setFlag(fs, fs.Lookup("access-log"), value); err != nil || cfg.AccessLog != want {
			t.Errorf("%q: %v, %v; want %v", value, cfg.AccessLog, err, want)
		}
	}
	for _, value := range []string{"", "t", "F", "y", "2", "maybe", "enabled"} {
		cfg := server.Defaults
		fs, _ := newFlagSet(&cfg)
		if err := setFlag(fs, fs.Lookup("access-log"), value); err == nil {
			t.Errorf("%q accepted", value)
		}
	}
}

func TestNearestFlag(t *testing.T) {
	cfg := server.Defaults
	fs, _ := newFlagSet(&cfg)
	for name, want := range map[string]string{
		"prot":               "port",
		"hots":               "host",
		"acess-log":          "access-log",
		"access_log":         "access-log",
		"threds":             "threads",
		"keep-alive-timeout": "keepalive-timeout",
		"max-body-siz":       "max-body-size",
		"lifespa":            "lifespan",
		"quic-bind":          "",
		"x":                  "",
		"ssl-keyfil":         "ssl-keyfile",
		"max":                "",
	} {
		if got := nearestFlag(fs, name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"port", "port", 0}, {"prot", "port", 1}, {"", "port", 4},
		{"host", "hots", 1}, {"kitten", "sitting", 3}, {"threds", "threads", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestHelpLines: every --help line is short; figures go in the README.
func TestHelpLines(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if status := run([]string{"--help"}, &stdout, &stderr); status != 0 {
		t.Fatalf("--help: status %d, %s", status, stderr.String())
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > 160 {
			t.Errorf("%d characters: %s", n, line)
		}
	}
}
