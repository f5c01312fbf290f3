package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestArmArgvFillsTheAddress(t *testing.T) {
	arm := Arm{Command: []string{"uvicorn", "--host", "{host}", "--port", "{port}", "app:app", "--bind={addr}"}}
	got := arm.Argv("127.0.0.1", 18085)
	want := []string{"uvicorn", "--host", "127.0.0.1", "--port", "18085", "app:app", "--bind=127.0.0.1:18085"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
	if arm.Command[2] != "{host}" {
		t.Error("Argv changed the arm's own command")
	}
}

func TestArmMissingNamesWhatIsAbsent(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "app.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	present := Arm{Command: []string{"sh", "-c", "true"}, Requires: []string{"./app.py"}}
	if m := present.Missing(root); m != "" {
		t.Errorf("Missing = %q for an arm with everything present", m)
	}
	noFile := Arm{Command: []string{"sh"}, Requires: []string{"./apps/absent.py"}}
	if m := noFile.Missing(root); m != "./apps/absent.py not found" {
		t.Errorf("Missing = %q, want the absent file", m)
	}
	noTool := Arm{Command: []string{"no-such-server-m0bench"}}
	if m := noTool.Missing(root); m != "no-such-server-m0bench not on PATH" {
		t.Errorf("Missing = %q, want the absent executable", m)
	}
	// A server whose --help offers --ws but not --asgi-thread.
	server := filepath.Join(root, "server")
	if err := os.WriteFile(server, []byte("#!/bin/sh\necho '  --ws (env M0_WS)'\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	offered := Arm{Command: []string{"./server"}, RequiresHelp: []string{"--ws"}}
	if m := offered.Missing(root); m != "" {
		t.Errorf("Missing = %q for a flag --help offers", m)
	}
	older := Arm{Command: []string{"./server"}, RequiresHelp: []string{"--ws", "--asgi-thread"}}
	if m := older.Missing(root); m != "./server --help does not offer --asgi-thread" {
		t.Errorf("Missing = %q, want the flag --help lacks", m)
	}
}

func TestLoadArms(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "arms.json")
	err := os.WriteFile(good, []byte(`[
		{"name": "uvicorn", "kind": "asgi", "command": ["uvicorn", "--port", "{port}", "app:app"],
		 "env": ["PYTHONPATH=tests/apps"], "requires": ["uvicorn"]},
		{"name": "plain", "command": ["./server", "{addr}"]}
	]`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	arms, err := LoadArms(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 2 || arms[0].Kind != "asgi" || arms[0].Env[0] != "PYTHONPATH=tests/apps" {
		t.Errorf("loaded %+v", arms)
	}
	if arms[1].Kind != "native" {
		t.Errorf("an arm without a kind got %q, want native", arms[1].Kind)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"name": "no-command"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadArms(bad); err == nil {
		t.Error("an arm without a command was accepted")
	}
}

func TestSelectArms(t *testing.T) {
	arms := []Arm{{Name: "m0serve"}, {Name: "fasthttp"}, {Name: "floor"}}
	chosen, err := selectArms(arms, "floor,m0serve")
	if err != nil {
		t.Fatal(err)
	}
	if len(chosen) != 2 || chosen[0].Name != "floor" || chosen[1].Name != "m0serve" {
		t.Errorf("chose %+v", chosen)
	}
	if _, err := selectArms(arms, "uwsgi"); err == nil {
		t.Error("an unknown arm was accepted")
	}
}

func TestUniqueNames(t *testing.T) {
	if err := uniqueNames([]Arm{{Name: "fasthttp"}, {Name: "uvicorn"}}); err != nil {
		t.Errorf("distinct names refused: %v", err)
	}
	if err := uniqueNames([]Arm{{Name: "fasthttp"}, {Name: "uvicorn"}, {Name: "fasthttp"}}); err == nil {
		t.Error("an extra arm reusing a built-in name was accepted")
	}
}
