package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/server"
)

// TestPeerSpellings: uvicorn's and Granian's spellings set m0serve's
// flag, with the flag's own value checks; a negative spelling takes no
// value.
func TestPeerSpellings(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		check func(cfg *server.Config) bool
	}{
		{[]string{"--timeout-keep-alive", "7"}, func(c *server.Config) bool { return c.KeepAliveTimeout.Seconds() == 7 }},
		{[]string{"--timeout-graceful-shutdown=3"}, func(c *server.Config) bool { return c.GracefulTimeout.Seconds() == 3 }},
		{[]string{"--access-log", "--no-access-log"}, func(c *server.Config) bool { return !c.AccessLog }},
		{[]string{"--log-access"}, func(c *server.Config) bool { return c.AccessLog }},
		{[]string{"--ssl-certificate", "c.pem", "--ssl-keyfile", "k.pem"}, func(c *server.Config) bool { return c.TLS.CertFile == "c.pem" && c.TLS.KeyFile == "k.pem" }},
		{[]string{"--url-path-prefix", "/api"}, func(c *server.Config) bool { return c.RootPath == "/api" }},
		{[]string{"--no-ws"}, func(c *server.Config) bool { return c.WS == "none" }},
		{[]string{"--limit-max-requests", "9", "--limit-max-requests-jitter", "2"}, func(*server.Config) bool { return master.MaxRequests == 9 && master.MaxRequestsJitter == 2 }},
		{[]string{"--workers-max-rss", "512"}, func(*server.Config) bool { return master.MaxWorkerRSS == 512 }},
		{[]string{"--workers-lifetime", "3600"}, func(*server.Config) bool { return master.MaxWorkerLifetime.Hours() == 1 }},
	} {
		cfg := server.Defaults
		fs, _ := newFlagSet(&cfg)
		if _, err := parseArgs(fs, append(tc.args, "app:app")); err != nil || !tc.check(&cfg) {
			t.Errorf("%q: %v, %+v", tc.args, err, cfg)
		}
	}
	cfg := server.Defaults
	fs, _ := newFlagSet(&cfg)
	if _, err := parseArgs(fs, []string{"--no-access-log=true"}); err == nil || err.Error() != "--no-access-log takes no value (it is --access-log=false)" {
		t.Errorf("--no-access-log=true: %v", err)
	}
	if _, err := parseArgs(fs, []string{"--timeout-keepalive", "5"}); err == nil || err.Error() != "unknown flag --timeout-keepalive; did you mean --timeout-keep-alive?" {
		t.Errorf("a slip in a peer spelling: %v", err)
	}
	if _, err := parseArgs(fs, []string{"--timeout-keep-alive", "soon"}); err == nil || !strings.Contains(err.Error(), `--timeout-keep-alive "soon": want a duration`) {
		t.Errorf("--timeout-keep-alive soon: %v", err)
	}
}

// TestPeerInterfaces: uvicorn's asgi3 and asgi2 and Granian's asginl are
// --interface asgi (asginl without lifespan unless --lifespan says);
// Granian's rsgi is refused in one line.
func TestPeerInterfaces(t *testing.T) {
	for _, tc := range []struct {
		args                []string
		interfaceWant, life string
	}{
		{[]string{"--interface", "asgi3"}, "asgi", "auto"},
		{[]string{"--interface", "ASGI2"}, "asgi", "auto"},
		{[]string{"--interface", "asginl"}, "asgi", "off"},
		{[]string{"--interface", "asginl", "--lifespan", "on"}, "asgi", "on"},
		{[]string{"--interface", "wsgi"}, "wsgi", "auto"},
	} {
		cfg := server.Defaults
		fs, options := newFlagSet(&cfg)
		if _, err := parseArgs(fs, tc.args); err != nil {
			t.Fatal(err)
		}
		if err := applyPeerOptions(fs, options, &cfg); err != nil || cfg.Interface != tc.interfaceWant || cfg.Lifespan != tc.life {
			t.Errorf("%q: %v, interface %s lifespan %s", tc.args, err, cfg.Interface, cfg.Lifespan)
		}
	}
	var stdout, stderr bytes.Buffer
	if status := run([]string{"--interface", "rsgi", "app:app"}, &stdout, &stderr); status != 2 ||
		stderr.String() != "m0serve: --interface rsgi: Granian's own protocol is not served; a WSGI or ASGI app is (--interface auto, wsgi or asgi)\n" {
		t.Errorf("rsgi: %d %q", status, stderr.String())
	}
	stdout.Reset()
	if status := run([]string{"--help"}, &stdout, &stderr); status != 0 ||
		!strings.Contains(stdout.String(), " --timeout-keep-alive (--keepalive-timeout)") ||
		!strings.Contains(stdout.String(), " --no-access-log (--access-log=false)") {
		t.Errorf("--help lists no spellings:\n%s", stdout.String())
	}
}
