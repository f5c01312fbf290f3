package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/server"
)

// TestHelpGroups: every flag is in exactly one group of --help, a flag
// that takes a value says what (--access-log-file FILE), and the groups
// come in their order.
func TestHelpGroups(t *testing.T) {
	cfg := server.Defaults
	fs, options := newFlagSet(&cfg)
	fs.Bool("version", false, "")
	seen := map[string]string{}
	for _, g := range helpGroups {
		for _, name := range g.flags {
			if other, dup := seen[name]; dup {
				t.Errorf("--%s in %s and %s", name, other, g.title)
			}
			seen[name] = g.title
			if name != "help" && fs.Lookup(name) == nil {
				t.Errorf("%s lists --%s, which is not a flag", g.title, name)
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if seen[f.Name] == "" {
			t.Errorf("--%s is in no --help group", f.Name)
		}
		if p := placeholders[f.Name]; (p == "") != isBool(f) {
			t.Errorf("--%s: placeholder %q for a flag that is boolean: %v", f.Name, p, isBool(f))
		}
	})
	var out bytes.Buffer
	usage(&out, fs, options)
	text, at := out.String(), 0
	for _, g := range helpGroups {
		i := strings.Index(text[at:], "\n"+g.title+":\n")
		if i < 0 {
			t.Fatalf("group %s missing or out of order:\n%s", g.title, text)
		}
		at += i + 1
	}
}

// TestBindAddress: gunicorn's -b in its forms sets m0serve's flags; -w
// is --workers, -V --version.
func TestBindAddress(t *testing.T) {
	cases := []struct {
		args       []string
		host       string
		port       int
		uds        string
		fd         int
		workers    int
		hostGiven  bool
		versionSet bool
	}{
		{[]string{"-b", "0.0.0.0:9000"}, "0.0.0.0", 9000, "", -1, 0, true, false},
		{[]string{"--bind=[::1]:9001"}, "::1", 9001, "", -1, 0, true, false},
		{[]string{"-b", ":9002"}, "0.0.0.0", 9002, "", -1, 0, true, false},
		{[]string{"-b", "localhost"}, "localhost", 8000, "", -1, 0, true, false},
		{[]string{"-b", "tcp://10.0.0.1:80"}, "10.0.0.1", 80, "", -1, 0, true, false},
		{[]string{"-b", "unix:/run/app.sock"}, "127.0.0.1", 8000, "/run/app.sock", -1, 0, false, false},
		{[]string{"-b", "unix:///run/app.sock"}, "127.0.0.1", 8000, "/run/app.sock", -1, 0, false, false},
		{[]string{"-b", "fd://3"}, "127.0.0.1", 8000, "", 3, 0, false, false},
		{[]string{"-w", "3", "-V"}, "127.0.0.1", 8000, "", -1, 3, false, true},
	}
	for _, tc := range cases {
		cfg := server.Defaults
		fs, _ := newFlagSet(&cfg)
		version := fs.Bool("version", false, "")
		if _, err := parseArgs(fs, tc.args); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "host" })
		if cfg.Host != tc.host || cfg.Port != tc.port || cfg.UDS != tc.uds || cfg.FD != tc.fd ||
			master.Workers != tc.workers || given != tc.hostGiven || *version != tc.versionSet {
			t.Errorf("%q: host %q port %d uds %q fd %d workers %d host given %v version %v", tc.args,
				cfg.Host, cfg.Port, cfg.UDS, cfg.FD, master.Workers, given, *version)
		}
	}
}

// TestCheckHost: a port in --host is refused with the flags to write.
func TestCheckHost(t *testing.T) {
	for host, want := range map[string]string{
		"127.0.0.1": "", "::1": "", "0.0.0.0": "", "example.com": "", "fe80::1%eth0": "",
		"0.0.0.0:8000": "--host 0.0.0.0:8000: the port goes in --port: --host 0.0.0.0 --port 8000 (or -b 0.0.0.0:8000)",
		"[::]:80":      "--host [::]:80: the port goes in --port: --host :: --port 80 (or -b [::]:80)",
	} {
		err := checkHost(host)
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("%s: %q, want %q", host, got, want)
			}
		} else if want != "" {
			t.Errorf("%s: accepted", host)
		}
	}
}

// TestReportJSON: with --log-format json the error m0serve exits with is
// a JSON line like the log's others.
func TestReportJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	status := run([]string{"--log-format", "json", "--native", "hello", "--port", "0", "--metrics-address", "bad"}, &stdout, &stderr)
	var entry struct{ Time, Level, Msg string }
	if err := json.Unmarshal(stderr.Bytes(), &entry); status != 2 || err != nil || entry.Level != "ERROR" ||
		!strings.HasPrefix(entry.Msg, "--metrics-address: bad") || entry.Time == "" || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("status %d, %q (%v)", status, stderr.String(), err)
	}
}
