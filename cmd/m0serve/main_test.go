package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
		{"help", []string{"--help"}, nil, 0, "--max-body-size (env M0_MAX_BODY_SIZE)"},
		{"version", []string{"--version"}, nil, 0, "m0serve "},
		{"unknown flag", []string{"--nope"}, nil, 2, "-nope"},
		{"env error names the flag", nil, map[string]string{"M0_MAX_CONNECTIONS": "many"}, 2, "--max-connections"},
		{"env applies", []string{"--native", "hello"}, map[string]string{"M0_BACKEND": "bogus"}, 2, "--backend"},
		{"flag wins over env", []string{"--native", "nope"}, map[string]string{"M0_NATIVE": "hello"}, 2, "--native"},
		{"help names the app", []string{"--help"}, nil, 0, "m0serve [flags] module:attr"},
		{"help states the threads default", []string{"--help"}, nil, 0, "Default 1, measured"},
		{"interface checked", []string{"--interface", "asgix", "app:application"}, nil, 2, `--interface: "asgix": want auto, wsgi or asgi`},
		{"loop from env", []string{"app:application"}, map[string]string{"M0_LOOP": "trio"}, 2, `--loop: "trio": want auto, asyncio or uvloop`},
		{"lifespan from env", []string{"app:application"}, map[string]string{"M0_LIFESPAN": "maybe"}, 2, `--lifespan: "maybe": want auto, on or off`},
		{"flag wins over lifespan env", []string{"--lifespan", "bogus", "app:application"}, map[string]string{"M0_LIFESPAN": "on"}, 2, `--lifespan: "bogus"`},
		{"help lists the ASGI flags", []string{"--help"}, nil, 0, "--lifespan (env M0_LIFESPAN)"},
		{"threads from env", []string{"app:application"}, map[string]string{"M0_THREADS": "-1"}, 2, "--threads: -1"},
		{"bool env", []string{"app:application"}, map[string]string{"M0_FACTORY": "maybe"}, 2, "--factory"},
		{"access-log env", []string{"app:application"}, map[string]string{"M0_ACCESS_LOG": "1", "M0_ROOT_PATH": "x"}, 2, "--root-path"},
		{"two apps", []string{"a:b", "c:d"}, nil, 2, "one application"},
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
