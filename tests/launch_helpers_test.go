//go:build linux

package tests

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// launchLimit bounds the wait for a start: a server that never gets ready
// fails its test rather than hanging the suite.
const launchLimit = 30 * time.Second

// launch starts cmd with its stderr kept in the returned server's log and
// waits until ready has matched n of its lines (m0serve's start line, or
// each worker's); it returns the server, stopped when the test ends, and
// the first matching line's submatches. what names the program in a
// failure.
func launch(t testing.TB, cmd *exec.Cmd, what string, ready *regexp.Regexp, n int) (*server, []string) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, logs: &logBuffer{}, exit: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan []string, 1)
	enough := make(chan struct{})
	go func() {
		matched := 0
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			s.logs.add(lines.Text())
			m := ready.FindStringSubmatch(lines.Text())
			if m == nil {
				continue
			}
			if matched == 0 {
				first <- m
			}
			if matched++; matched == n {
				close(enough)
			}
		}
		s.exit <- cmd.Wait()
	}()
	t.Cleanup(s.stop)
	select {
	case <-enough:
	case err := <-s.exit:
		select {
		case <-enough: // ready, then gone: the test sees the exit
			s.exit <- err
		default:
			s.done = true
			t.Fatalf("%s exited before it was ready: %v\n%s", what, err, s.logs)
		}
	case <-time.After(launchLimit):
		t.Fatalf("%s was not ready within %v:\n%s", what, launchLimit, s.logs)
	}
	return s, <-first
}

// runProgram runs a command that must exit on its own (a start-up error,
// --help, a launcher's --version) and returns its exit status and
// output. One still running after a minute is killed and fails the test:
// a start-up error that ends in a serving process must not hang the
// suite or outlive it.
func runProgram(t *testing.T, env []string, name string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: still running after a minute, killed\n%s", name, args, out)
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return 0, string(out)
}
