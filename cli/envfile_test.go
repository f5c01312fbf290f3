package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/m0serve/m0serve/server"
)

// TestEnvFile: the file's variables are set unless the environment has
// them; its M0_* set flags the command line did not; a bad value names
// the file, the variable and the flag.
func TestEnvFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".env")
	text := "# comment\nexport M0_THREADS=3\nM0_PORT=9001\nM0_TEST_ENV_FILE_A='single quoted # kept'\nM0_TEST_ENV_FILE_B=kept # comment\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("M0_TEST_ENV_FILE_B", "from the environment")
	for _, name := range []string{"M0_THREADS", "M0_PORT", "M0_TEST_ENV_FILE_A"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	cfg := server.Defaults
	fs, options := newFlagSet(&cfg)
	if _, err := parseArgs(fs, []string{"--env-file", file, "--port", "7000"}); err != nil {
		t.Fatal(err)
	}
	if err := applyPeerOptions(fs, options, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Threads != 3 || cfg.Port != 7000 || os.Getenv("M0_TEST_ENV_FILE_A") != "single quoted # kept" ||
		os.Getenv("M0_TEST_ENV_FILE_B") != "from the environment" {
		t.Errorf("threads %d port %d, A %q B %q", cfg.Threads, cfg.Port, os.Getenv("M0_TEST_ENV_FILE_A"), os.Getenv("M0_TEST_ENV_FILE_B"))
	}
	if err := os.WriteFile(file, []byte("M0_THREADS=many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("M0_THREADS")
	cfg = server.Defaults
	fs, options = newFlagSet(&cfg)
	if _, err := parseArgs(fs, []string{"--env-file", file}); err != nil {
		t.Fatal(err)
	}
	err := applyPeerOptions(fs, options, &cfg)
	if want := "--env-file " + file + `: M0_THREADS="many" (for --threads): want a whole number`; err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
}

// TestUnknownVariables: an M0_ variable no flag reads is named, with the
// nearest flag's when one is close; the internal ones are not.
func TestUnknownVariables(t *testing.T) {
	t.Setenv("M0_WORKER", "4")
	t.Setenv("M0_SOMETHING_ELSE_ENTIRELY", "1")
	t.Setenv("M0_URING_DISABLE", "cancel_fd")
	t.Setenv("M0_CPUPROFILE", "/tmp/p")
	cfg := server.Defaults
	_, options := newFlagSet(&cfg)
	got := unknownVariables(options)
	want := []string{"M0_SOMETHING_ELSE_ENTIRELY", "M0_WORKER (M0_WORKERS?)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}
