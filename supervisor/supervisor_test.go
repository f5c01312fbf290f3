package supervisor

import (
	"syscall"
	"testing"
	"time"

	"github.com/m0serve/m0serve/internal/configerr"
)

func TestBackoff(t *testing.T) {
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	for crashes, delay := range want {
		if got := backoff(crashes); got != delay {
			t.Errorf("backoff(%d) = %v, want %v", crashes, got, delay)
		}
	}
	if got := backoff(20); got != backoffMax {
		t.Errorf("backoff(20) = %v, want the cap %v", got, backoffMax)
	}
}

func TestValidate(t *testing.T) {
	valid := Defaults
	valid.Workers = 2
	valid.Server = &testServer{}
	if err := valid.Validate(); err != nil {
		t.Fatalf("valid configuration: %v", err)
	}
	cases := map[string]func(c *Config){
		"workers":             func(c *Config) { c.Workers = 0 },
		"listener":            func(c *Config) { c.Listener = "many" },
		"worker-timeout":      func(c *Config) { c.WorkerTimeout = -time.Second },
		"max-requests":        func(c *Config) { c.MaxRequests = -1 },
		"max-requests-jitter": func(c *Config) { c.MaxRequestsJitter = -1 },
		"max-worker-lifetime": func(c *Config) { c.MaxWorkerLifetime = -time.Second },
		"max-worker-rss":      func(c *Config) { c.MaxWorkerRSS = -1 },
		"rss-check-interval":  func(c *Config) { c.RSSCheckInterval = 0 },
		// The workers' own flags: the server's check, passed on.
		"port": func(c *Config) { c.Server = &testServer{invalid: &configerr.Error{Flag: "port", Reason: "-1"}} },
	}
	for flag, spoil := range cases {
		c := valid
		spoil(&c)
		err := c.Validate()
		cfgErr, ok := err.(*configerr.Error)
		if !ok || cfgErr.Flag != flag {
			t.Errorf("spoiled %s: %v, want a ConfigError naming it", flag, err)
		}
	}
}

func TestDescribeExit(t *testing.T) {
	// A wait status: exit code in bits 8-15, or the signal in bits 0-6.
	if got := describeExit(syscall.WaitStatus(3 << 8)); got != "exit status 3" {
		t.Errorf("exit 3: %q", got)
	}
	if got := describeExit(syscall.WaitStatus(syscall.SIGSEGV)); got != "killed by signal 11 (segmentation fault)" {
		t.Errorf("SIGSEGV: %q", got)
	}
}
