package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDockerCommand: each variant's command line comes from its
// Dockerfile, with the image's binary replaced and verify's flags before
// the CMD; an entry point of its own is kept, the base image's used
// otherwise, and a command without --workers is noticed.
func TestDockerCommand(t *testing.T) {
	extra := []string{"--port", "0"}
	for _, c := range []struct {
		test string
		want []string
	}{
		{"default", []string{"/bin/sh", "-c", `exec bin/m0serve --workers "$(nproc)" "$@"`, "m0serve", "--port", "0", "app_wsgi:app"}},
		{"asgi", []string{"/bin/sh", "-c", `exec bin/m0serve --workers "$(nproc)" "$@"`, "m0serve", "--port", "0", "app_asgi:app"}},
		{"native", []string{"/bin/sh", "-c", `exec bin/m0serve --workers "$(nproc)" "$@"`, "m0serve", "--port", "0", "--native", "tfb"}},
	} {
		entrypoint, cmd, err := dockerCommand(dockerfileName("..", "m0serve", c.test))
		if err != nil {
			t.Fatal(err)
		}
		argv, workers := serverCommand(entrypoint, cmd, "bin/m0serve", extra)
		if !slices.Equal(argv, c.want) || !workers {
			t.Errorf("%s: %q (workers %v), want %q", c.test, argv, workers, c.want)
		}
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "one.dockerfile")
	os.WriteFile(path, []byte("FROM m0serve\nCMD [\"app:app\"]\n"), 0o644)
	entrypoint, cmd, err := dockerCommand(path)
	if err != nil {
		t.Fatal(err)
	}
	argv, workers := serverCommand(entrypoint, cmd, "bin/m0serve", extra)
	if want := []string{"bin/m0serve", "--port", "0", "app:app"}; !slices.Equal(argv, want) || workers {
		t.Errorf("CMD only: %q (workers %v), want %q without workers", argv, workers, want)
	}
	os.WriteFile(path, []byte("FROM m0serve\nCMD app:app\n"), 0o644)
	if _, _, err := dockerCommand(path); err == nil || !strings.Contains(err.Error(), "exec form") {
		t.Errorf("shell-form CMD: %v", err)
	}
}

// TestConfigLanguage: a test is labelled with the language its variant
// is written in; the native handler is Go.
func TestConfigLanguage(t *testing.T) {
	if _, _, problems := configTests("../benchmark_config.json"); len(problems) > 0 {
		t.Errorf("benchmark_config.json: %q", problems)
	}
	data, err := os.ReadFile("../benchmark_config.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "benchmark_config.json")
	os.WriteFile(path, []byte(strings.ReplaceAll(string(data), `"language": "Go"`, `"language": "Python"`)), 0o644)
	framework, _, problems := configTests(path)
	if framework != "m0serve" || !slices.Equal(problems, []string{"test native: language Python, want Go"}) {
		t.Errorf("native labelled Python: framework %q, problems %q", framework, problems)
	}
}
