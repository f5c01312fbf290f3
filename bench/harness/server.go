package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Server is one arm's running process, pinned to the server CPU.
type Server struct {
	Arm     Arm
	Port    int
	LogPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// startServer launches the arm under `taskset -c cpu` (taskset execs the
// command, so the pid is the server's) in its own process group, with
// its output in logPath.
func startServer(arm Arm, root, host string, port int, cpu, logPath string) (*Server, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log for %s: %w", arm.Name, err)
	}
	argv := append([]string{"-c", cpu}, arm.Argv(host, port)...)
	cmd := exec.Command("taskset", argv...)
	cmd.Dir = root
	if arm.Dir != "" {
		cmd.Dir = arm.Dir
	}
	cmd.Env = append(os.Environ(), arm.Env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", arm.Name, err)
	}
	s := &Server{Arm: arm, Port: port, LogPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	return s, nil
}

// Pid is the server process's id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Addr is where the server listens.
func (s *Server) Addr(host string) string { return net.JoinHostPort(host, strconv.Itoa(s.Port)) }

// Alive says whether the process is still running.
func (s *Server) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// WaitReady waits until the port accepts a connection, the process exits
// or the timeout passes.
func (s *Server) WaitReady(host string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !s.Alive() {
			return fmt.Errorf("%s exited before listening (%v): %s", s.Arm.Name, s.waitErr, s.LogTail())
		}
		conn, err := net.DialTimeout("tcp", s.Addr(host), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not listening on port %d after %v: %s", s.Arm.Name, s.Port, timeout, s.LogTail())
}

// Stop asks the process group to terminate and kills it if it has not
// gone within the grace period.
func (s *Server) Stop(grace time.Duration) {
	if !s.Alive() {
		return
	}
	pgid := s.cmd.Process.Pid // Setpgid made the server its group's leader
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintf(os.Stderr, "harness: SIGTERM %s: %v\n", s.Arm.Name, err)
	}
	select {
	case <-s.exited:
	case <-time.After(grace):
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			fmt.Fprintf(os.Stderr, "harness: SIGKILL %s: %v\n", s.Arm.Name, err)
		}
		<-s.exited
	}
}

// LogTail is the end of the server's output, for error messages.
func (s *Server) LogTail() string {
	data, err := os.ReadFile(s.LogPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(data) == 0 {
		return "(no output)"
	}
	return lastLines(string(data), 3)
}

// portFree reports whether nothing listens on host:port, so an arm never
// measures a stranger's server by accident.
func portFree(host string, port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 200*time.Millisecond)
	if err != nil {
		return true
	}
	conn.Close()
	return false
}
