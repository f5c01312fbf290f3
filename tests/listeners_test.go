//go:build linux

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startReady starts cmd and waits until its log has shown ready n times
// (a single process's start line, or each worker's).
func startReady(t *testing.T, cmd *exec.Cmd, ready *regexp.Regexp, n int) *server {
	t.Helper()
	s, _ := launch(t, cmd, "m0serve", ready, n)
	return s
}

func m0serveCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = cleanEnv()
	return cmd
}

// unixClient talks HTTP over the Unix socket at path.
func unixClient(path string) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
}

func askApp(t *testing.T, client *http.Client, url string, s *server) seen {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.logs)
	}
	var got seen
	if err := json.Unmarshal(readBody(t, resp), &got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v\n%s", resp.StatusCode, err, s.logs)
	}
	return got
}

// TestUDS: --uds replaces a stale socket file, sets the mode asked for,
// serves HTTP on it (one process, and workers sharing it), and removes
// the file at exit.
func TestUDS(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m0.sock")
			// A crashed run's socket: the file stays, nobody listens.
			stale, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			stale.(*net.UnixListener).SetUnlinkOnClose(false)
			stale.Close()

			args := []string{"--uds", path, "--uds-mode", "660", "--access-log", "--app-dir", appsDir(t), "proxy_app:app"}
			n := 1
			if workers > 0 {
				args = append(args, "--workers", fmt.Sprint(workers))
				n = workers
			}
			s := startReady(t, m0serveCommand(args...), regexp.MustCompile(`serving on unix:`+regexp.QuoteMeta(path)), n)
			info, err := os.Stat(path)
			if err != nil || info.Mode()&os.ModeSocket == 0 || info.Mode().Perm() != 0o660 {
				t.Fatalf("socket file: %v %v", info.Mode(), err)
			}
			if got := askApp(t, unixClient(path), "http://m0serve/", s); got.Addr != "" || got.Scheme != "http" {
				t.Errorf("app saw %+v", got)
			}
			s.stop()
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Errorf("socket file left after exit: %v", err)
			}
			if !strings.Contains(s.logs.String(), `- - - [`) {
				t.Errorf("no access-log line with the Unix peer's -:\n%s", s.logs)
			}
		})
	}
}

// TestUDSRefused: a socket someone listens on, or a file that is not a
// socket, is not replaced: exit 2 naming --uds.
func TestUDSRefused(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.sock")
	ln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	plain := filepath.Join(dir, "plain")
	writeFile(t, plain, "data")
	for _, path := range []string{live, plain} {
		status, out := runToExit(t, cleanEnv(), "--uds", path, "--native", "hello")
		if status != 2 || !strings.HasPrefix(out, "m0serve: --uds: ") {
			t.Errorf("--uds %s: status %d\n%s", path, status, out)
		}
	}
	if data, err := os.ReadFile(plain); err != nil || string(data) != "data" {
		t.Errorf("the plain file was touched: %q %v", data, err)
	}
}

// inheritedTCP is a listening TCP socket for a child, as its file.
func inheritedTCP(t *testing.T) (*os.File, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	file, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // the file's descriptor keeps the socket
	t.Cleanup(func() { file.Close() })
	return file, ln.Addr().String()
}

// TestInheritedSocket: --fd N accepts on a socket the parent opened, and
// so does systemd socket activation (LISTEN_FDS, LISTEN_PID of the
// process itself, the socket at descriptor 3), one process or workers.
func TestInheritedSocket(t *testing.T) {
	for _, c := range []struct {
		name    string
		systemd bool
		workers int
	}{
		{"fd", false, 0}, {"fd-workers", false, 2}, {"systemd", true, 0}, {"systemd-workers", true, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, addr := inheritedTCP(t)
			args := []string{"--app-dir", appsDir(t), "proxy_app:app"}
			if !c.systemd {
				args = append(args, "--fd", "3")
			}
			n := 1
			if c.workers > 0 {
				args = append(args, "--workers", fmt.Sprint(c.workers))
				n = c.workers
			}
			cmd := m0serveCommand(args...)
			if c.systemd {
				// systemd sets LISTEN_PID to the service's pid: the shell's
				// $$, which exec hands to m0serve.
				cmd = exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"`, "sh", binary}, args...)...)
				cmd.Env = cleanEnv()
			}
			cmd.ExtraFiles = []*os.File{file}
			s := startReady(t, cmd, regexp.MustCompile(`serving on http://`+regexp.QuoteMeta(addr)+` `), n)
			client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			if got := askApp(t, client, "http://"+addr+"/", s); got.Addr != "127.0.0.1" {
				t.Errorf("app saw %+v", got)
			}
		})
	}
}

// TestInheritedNotASocket: --fd naming a file that is not a listening
// socket is a config error.
func TestInheritedNotASocket(t *testing.T) {
	file, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cmd := m0serveCommand("--fd", "3", "--native", "hello")
	cmd.ExtraFiles = []*os.File{file}
	out, err := cmd.CombinedOutput()
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() != 2 || strings.TrimSpace(string(out)) != "m0serve: --fd: 3: not a listening socket" {
		t.Errorf("%v\n%s", err, out)
	}
}
