package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The arms file make bench-tls passes loads, and a command gets its
// port and certificate.
func TestArmsFile(t *testing.T) {
	arms, err := loadArms(filepath.Join("..", "tls-handshake-arms.json"))
	if err != nil {
		t.Fatal(err)
	}
	if arms[0].Name != "m0serve-asgi" {
		t.Errorf("first arm %s: the ratios are m0serve-asgi's against the peers serving the same app", arms[0].Name)
	}
	argv := arms[0].Argv("127.0.0.1", 18470, cert{"ecdsa", "/c.pem", "/k.pem"})
	joined := strings.Join(argv, " ")
	for _, want := range []string{"--port 18470", "--ssl-certfile /c.pem", "--ssl-keyfile /k.pem"} {
		if !strings.Contains(joined, want) {
			t.Errorf("argv %q lacks %q", joined, want)
		}
	}
	chosen, err := selectArms(arms, "uvicorn-asgi,m0serve-asgi")
	if err != nil || len(chosen) != 2 || chosen[0].Name != "uvicorn-asgi" {
		t.Errorf("selectArms: %v, %v", chosen, err)
	}
	if _, err := selectArms(arms, "nginx"); err == nil {
		t.Error("selectArms took an arm the file lacks")
	}
}

// An arm whose command has no {cert} would serve the same certificate
// in every column: refused.
func TestArmsFileRefusesAMissingHole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arms.json")
	os.WriteFile(path, []byte(`[{"name": "x", "command": ["srv", "--port", "{port}", "--key", "{key}"]}]`), 0o644)
	if _, err := loadArms(path); err == nil || !strings.Contains(err.Error(), "{cert}") {
		t.Errorf("err = %v, want one naming {cert}", err)
	}
}

// The CPU of a server is its own and its descendants' (Granian's worker),
// exited threads included (a process's own stat counts them).
func TestProcessTicksCountsDescendants(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		full := filepath.Join(root, path)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(text), 0o644)
	}
	// Fields 14 and 15 (utime, stime); the name holds a space and a ')'.
	write("10/stat", "10 (granian) x) S 1 10 10 0 -1 0 0 0 0 0 30 12 0 0 20 0 2 0")
	write("10/task/10/children", "11 ")
	write("10/task/12/children", "")
	write("11/stat", "11 (granian) S 10 10 10 0 -1 0 0 0 0 0 100 8 0 0 20 0 1 0")
	got, err := processTicks(root, 10)
	if err != nil || got != 150 {
		t.Errorf("processTicks = %d, %v; want 150", got, err)
	}
	if _, err := processTicks(root, 99); err == nil {
		t.Error("a server with no /proc entry gave a figure")
	}
}

// The summary is the median of the rounds that worked; an arm whose
// rounds all failed has none.
func TestSummarise(t *testing.T) {
	rounds := []Round{
		{Round: 1, Arm: "a", Cert: "ecdsa", CPUus: 500},
		{Round: 1, Arm: "b", Cert: "ecdsa", Error: "the server did not listen"},
		{Round: 2, Arm: "a", Cert: "ecdsa", CPUus: 700},
		{Round: 3, Arm: "a", Cert: "ecdsa", CPUus: 900},
	}
	got := summarise(rounds)
	want := []Summary{
		{Arm: "a", Cert: "ecdsa", Rounds: 3, CPUus: 700, PerCPUSecond: 1e6 / 700.0},
		{Arm: "b", Cert: "ecdsa"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summarise = %+v, want %+v", got, want)
	}
}
