package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

const host = "127.0.0.1"

// measurement is one server's CPU over one batch of handshakes.
type measurement struct {
	handshakes int
	ticks      uint64
	seconds    float64
}

// cpuMicroseconds is the server's CPU per handshake (and its request);
// /proc counts in clock ticks of 1/100 s on Linux.
func (m measurement) cpuMicroseconds() float64 {
	return float64(m.ticks) * 1e6 / ticksPerSecond / float64(m.handshakes)
}

const ticksPerSecond = 100

// measure starts the arm's server with certificate c, makes warmup
// unrecorded handshakes (a Python server imports lazily on its first
// request), then n recorded ones, and stops the server.
func measure(root string, arm Arm, c cert, cpus string, port, n, warmup int, config *tls.Config) (measurement, error) {
	argv := append([]string{"-c", cpus}, arm.Argv(host, port, c)...)
	cmd := exec.Command("taskset", argv...)
	cmd.Dir = root
	// Its own process group, so a server that ignores SIGINT is killed
	// with its workers.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logFile, err := os.CreateTemp("", "tlshandshake-"+arm.Name+"-*.log")
	if err != nil {
		return measurement{}, err
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return measurement{}, fmt.Errorf("start %s: %w", arm.Command[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer stop(cmd, exited)

	addr := net.JoinHostPort(host, strconv.Itoa(port))
	if err := waitListening(addr, exited, 30*time.Second); err != nil {
		return measurement{}, fmt.Errorf("%w (log %s)", err, logFile.Name())
	}
	if err := handshakes(addr, warmup, config); err != nil {
		return measurement{}, fmt.Errorf("warm-up: %w (log %s)", err, logFile.Name())
	}
	pid := cmd.Process.Pid
	before, err := processTicks("/proc", pid)
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	if err := handshakes(addr, n, config); err != nil {
		return measurement{}, fmt.Errorf("%w (log %s)", err, filepath.Base(logFile.Name()))
	}
	seconds := time.Since(start).Seconds()
	after, err := processTicks("/proc", pid)
	if err != nil {
		return measurement{}, err
	}
	os.Remove(logFile.Name())
	return measurement{handshakes: n / concurrency * concurrency, ticks: after - before, seconds: seconds}, nil
}

// waitListening dials until the server accepts, it exits, or the time is up.
func waitListening(addr string, exited <-chan error, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("the server exited before listening: %v", werr)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not listen in %s: %w", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends the server SIGINT, then kills its process group if it has
// not exited within 10 s.
func stop(cmd *exec.Cmd, exited <-chan error) {
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

var request = []byte("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")

// handshakes makes n connections (rounded down to a multiple of
// concurrency), concurrency at a time, each a full handshake, one
// request and its whole answer, which must be a 200 with the hello body.
func handshakes(addr string, n int, config *tls.Config) error {
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/concurrency; i++ {
				if err := exchange(addr, config); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// exchange is one connection: handshake, request, answer, close.
func exchange(addr string, config *tls.Config) error {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(dialer, "tcp", addr, config)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if state := c.ConnectionState(); state.DidResume {
		return fmt.Errorf("a resumed session, not a full handshake")
	}
	if _, err := c.Write(request); err != nil {
		return err
	}
	answer, err := io.ReadAll(c)
	if err != nil && len(answer) == 0 {
		return fmt.Errorf("read the answer: %w", err)
	}
	if !bytes.HasPrefix(answer, []byte("HTTP/1.1 200 ")) || !bytes.HasSuffix(answer, []byte("Hello, World!")) {
		return fmt.Errorf("answer %.80q: want a 200 with the hello body", answer)
	}
	return nil
}
