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
// each worker's; none when n is 0); it returns the server, stopped when the test ends, and
// the first matching line's submatches. what names the program in a
// failure.
func launch(t testing.TB, cmd *exec.Cmd, what string, ready *regexp.Regexp, n int) (*server, []string) {
	t.Helper()
	s, starting := startLaunch(t, cmd, what, ready, n)
	return s, starting.wait(t)
}

// starting is a launch not yet waited for: a test can act on the process
// (fix a broken app, send a signal) before it is ready.
type starting struct {
	s      *server
	what   string
	first  chan []string
	enough chan struct{}
}

// startLaunch is launch without the wait.
func startLaunch(t testing.TB, cmd *exec.Cmd, what string, ready *regexp.Regexp, n int) (*server, *starting) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, logs: &logBuffer{}, exit: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &starting{s: s, what: what, first: make(chan []string, 1), enough: make(chan struct{})}
	if n == 0 { // nothing to wait for: a quiet start (--log-level warning)
		close(p.enough)
		p.first <- nil
	}
	go func() {
		matched := 0
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			s.logs.add(lines.Text())
			m := ready.FindStringSubmatch(lines.Text())
			if m == nil {
				continue
			}
			if matched == 0 && n > 0 {
				p.first <- m
			}
			if matched++; matched == n {
				close(p.enough)
			}
		}
		s.exit <- cmd.Wait()
	}()
	t.Cleanup(s.stop)
	return s, p
}

// wait waits until the launch is ready and returns the first matching
// line's submatches.
func (p *starting) wait(t testing.TB) []string {
	t.Helper()
	s := p.s
	select {
	case <-p.enough:
	case err := <-s.exit:
		select {
		case <-p.enough: // ready, then gone: the test sees the exit
			s.exit <- err
		default:
			s.done = true
			t.Fatalf("%s exited before it was ready: %v\n%s", p.what, err, s.logs)
		}
	case <-time.After(launchLimit):
		t.Fatalf("%s was not ready within %v:\n%s", p.what, launchLimit, s.logs)
	}
	return <-p.first
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
