// Command tlshandshake measures m0serve's server CPU per full TLS
// handshake (make bench-tls): for each certificate given, it starts
// bin/m0serve --native hello pinned to -server-cpu, makes -n connections
// from 8 goroutines with no session cache (every handshake a full one,
// where wrk resumes its sessions), each sending one request with
// Connection: close, and reads the server's utime+stime from /proc either
// side. The certificates alternate for -rounds rounds.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 2000, "handshakes per round")
	rounds := flag.Int("rounds", 2, "rounds; the certificates alternate within each")
	serverCPU := flag.String("server-cpu", "0", "taskset CPU list for the server")
	port := flag.Int("port", 18470, "port the server listens on")
	flag.Parse()
	if flag.NArg() == 0 || flag.NArg()%3 != 0 {
		fmt.Fprintln(os.Stderr, "usage: tlshandshake [flags] NAME CERT KEY [NAME CERT KEY...]")
		os.Exit(2)
	}
	for r := 1; r <= *rounds; r++ {
		for i := 0; i < flag.NArg(); i += 3 {
			name, cert, key := flag.Arg(i), flag.Arg(i+1), flag.Arg(i+2)
			us, err := round(*serverCPU, *port, cert, key, *n)
			if err != nil {
				fmt.Fprintf(os.Stderr, "tlshandshake: %s: %v\n", name, err)
				os.Exit(1)
			}
			fmt.Printf("round %d %-8s %d full handshakes: %.0f µs of server CPU each, %.0f per CPU-second\n", r, name, *n, us, 1e6/us)
		}
	}
}

// round runs one server and n handshakes against it, and returns the
// server's CPU microseconds per handshake (and its request).
func round(cpus string, port int, cert, key string, n int) (float64, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command("taskset", "-c", cpus, "bin/m0serve", "--native", "hello", "--host", "127.0.0.1",
		"--port", strconv.Itoa(port), "--ssl-certfile", cert, "--ssl-keyfile", key)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the server did not listen: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	pid := cmd.Process.Pid
	before, err := ticks(pid)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 512)
			for i := 0; i < n/8; i++ {
				// No ClientSessionCache: a full handshake every time.
				c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
				if err != nil {
					errs <- err
					return
				}
				c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
				for {
					if _, err := c.Read(buf); err != nil {
						break
					}
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	after, err := ticks(pid)
	if err != nil {
		return 0, err
	}
	return float64(after-before) * 1e6 / 100 / float64(n/8*8), nil
}

// ticks is the process's utime+stime in clock ticks (100 a second on
// Linux), threads included.
func ticks(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	return utime + stime, nil
}
