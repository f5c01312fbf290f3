package cli

import (
	"flag"
	"fmt"
	"github.com/m0serve/m0serve/grant"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/joho/godotenv"
	"github.com/m0serve/m0serve/internal/workerproto"
	"github.com/m0serve/m0serve/server"
)

// envFile is --env-file: a dotenv file whose variables the process and
// the app get (uvicorn's --env-file, python-dotenv's syntax).
var envFile string

// addPeerFlags defines the flags that exist for what uvicorn and Granian
// users carry over: --env-file and --log-config.
func addPeerFlags(fs *flag.FlagSet, cfg *server.Config) {
	fs.StringVar(&envFile, "env-file", "", "a dotenv file (KEY=VALUE lines) whose variables the app gets; the environment's own win; M0_* in it set flags not given")
	fs.StringVar(&cfg.LogConfig, "log-config", cfg.LogConfig, "configure the app's Python logging before it imports, as uvicorn: dictConfig JSON/YAML, else fileConfig (m0serve's log: --log-*)")
}

// loadEnvFile applies --env-file: each variable the environment does not
// have already is set (python-dotenv's default, as uvicorn loads it), and
// one of options' M0_* variables among them sets its flag unless the
// command line or the environment did (given).
func loadEnvFile(fs *flag.FlagSet, options []option, given map[string]bool) error {
	if envFile == "" {
		return nil
	}
	values, err := godotenv.Read(envFile)
	if err != nil {
		return fmt.Errorf("--env-file %s: %v", envFile, err)
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	fromFile := map[string]bool{}
	for _, name := range names {
		if _, ok := os.LookupEnv(name); ok {
			continue
		}
		if err := os.Setenv(name, values[name]); err != nil {
			return fmt.Errorf("--env-file %s: %s: %v", envFile, name, err)
		}
		fromFile[name] = true
	}
	for _, o := range options {
		if !fromFile[o.env] || given[o.name] {
			continue
		}
		if err := setFlag(fs, fs.Lookup(o.name), values[o.env]); err != nil {
			return fmt.Errorf("--env-file %s: %s=%q (for --%s): %v", envFile, o.env, values[o.env], o.name, err)
		}
		given[o.name] = true
	}
	return nil
}

// internalPrefixes and internalNames are M0_ variables that are no
// flag's and still mean something: to the master and its workers, to
// engineers (README, Environment) and to the build and the tests.
var (
	internalPrefixes = []string{"M0_WORKER_", "M0_URING_", "M0_TEST_", "M0_E2E_", "M0_WHEEL_", "M0_PYTHON_", "M0_SERVER_"}
	internalNames    = map[string]bool{"M0_CPUPROFILE": true, "M0_SCHED_NORMAL": true, "M0_BINARY": true,
		"M0_CONTAINER_NS": true, "M0_ROOTFS_CACHE": true, "M0_TARGET_PYTHON": true, "M0_PKG_CONFIG": true,
		// --realtime's, read by the server and the app alike.
		server.HeartbeatEnv: true, grant.KeyEnv: true, grant.PreviousKeyEnv: true, grant.CookieEnv: true}
)

// unknownVariables are the environment's M0_ variables that no flag
// reads (a typing mistake, or a flag's old name), each with the nearest
// flag's variable when one is close: "M0_WORKER (M0_WORKERS?)".
func unknownVariables(options []option) []string {
	known := map[string]bool{}
	for _, o := range options {
		known[o.env] = true
	}
	var unknown []string
	for _, entry := range os.Environ() {
		name, _, _ := strings.Cut(entry, "=")
		if !strings.HasPrefix(name, "M0_") || known[name] || internalNames[name] || hasAnyPrefix(name, internalPrefixes) {
			continue
		}
		best, bestDistance := "", 3
		for _, o := range options {
			if d := editDistance(name, o.env); d < bestDistance {
				best, bestDistance = o.env, d
			}
		}
		if best != "" {
			name += " (" + best + "?)"
		}
		unknown = append(unknown, name)
	}
	sort.Strings(unknown)
	return unknown
}

// warnUnknownVariables logs a warning for each of unknownVariables, in
// the process the user started (a worker has the same environment).
func warnUnknownVariables(stderr io.Writer, options []option) {
	if _, worker := os.LookupEnv(workerproto.SlotEnv); worker {
		return
	}
	unknown := unknownVariables(options)
	if len(unknown) == 0 {
		return
	}
	logf, err := server.NewLogf(stderr, logFormat, logLevel, -1)
	if err != nil {
		return // the flag's own error follows
	}
	for _, name := range unknown {
		logf("m0serve: warning: %s is set but no flag reads it (M0_ and a flag's name: --help); ignored", name)
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
