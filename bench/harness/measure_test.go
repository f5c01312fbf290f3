package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAnArmSurvivesIsolatedRunErrorsButNotARowOfThem(t *testing.T) {
	dir := t.TempDir()
	arm := Arm{Name: "sleeper", Command: []string{"sleep", "60"}}
	server, err := startServer(arm, dir, "127.0.0.1", 1, "0", filepath.Join(dir, "sleeper.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Stop(3 * time.Second) })
	record := &ArmRecord{Arm: arm}
	session := &Session{Log: t.Logf, Records: []*ArmRecord{record}, servers: map[string]*Server{"sleeper": server}}

	starved := errors.New("wrk completed no requests")
	for i := 1; i < maxRunErrors; i++ {
		if !session.runFailed(record, "c16 round 1", starved) {
			t.Fatalf("arm taken out after %d errors, want %d in a row", i, maxRunErrors)
		}
	}
	record.errorsInRow = 0 // a good run in between, as Measure does
	for i := 1; i < maxRunErrors; i++ {
		if !session.runFailed(record, "c16 round 2", starved) {
			t.Fatalf("a good run did not reset the count (out after %d)", i)
		}
	}
	if session.runFailed(record, "c16 round 3", starved) {
		t.Fatalf("arm still in after %d errors in a row", maxRunErrors)
	}
	if !strings.Contains(record.Failed, "wrk completed no requests") || server.Alive() {
		t.Errorf("failed %q, alive %v: want the reason recorded and the server stopped", record.Failed, server.Alive())
	}
	if len(record.RunErrors) != 2*maxRunErrors-1 {
		t.Errorf("%d run errors recorded, want %d", len(record.RunErrors), 2*maxRunErrors-1)
	}
	if len(session.live()) != 0 {
		t.Error("a failed arm is still live")
	}
}

func TestAnArmWhoseServerExitedIsOutAtOnce(t *testing.T) {
	dir := t.TempDir()
	arm := Arm{Name: "quitter", Command: []string{"true"}}
	server, err := startServer(arm, dir, "127.0.0.1", 1, "0", filepath.Join(dir, "quitter.log"))
	if err != nil {
		t.Fatal(err)
	}
	<-server.exited
	record := &ArmRecord{Arm: arm}
	session := &Session{Log: t.Logf, Records: []*ArmRecord{record}, servers: map[string]*Server{"quitter": server}}
	if session.runFailed(record, "c16 round 1", errors.New("server exited")) {
		t.Fatal("an arm whose server exited stayed in")
	}
}
