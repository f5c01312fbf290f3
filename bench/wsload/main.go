// Command wsload is the WebSocket load generator of make bench-ws: it
// opens -c connections to ws://-addr-path, then drives them in echo
// (ping-pong on every connection) or broadcast (every client sends, the
// server sends each message to every client) for -d, and prints one
// JSON line of figures. A goroutine per connection costs the client
// least on Go's netpoller; the message is framed and masked once.
//
// With -control, the harness decides when the measured part starts, so
// that connecting and closing stay out of the server's CPU figure:
// wsload prints "connected" once every connection is up, starts on a
// "go" line from stdin, prints its result, and closes the connections
// when stdin closes.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/m0serve/m0serve/bench/wsclient"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wsload:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8000", "server host:port (loopback)")
	path := flag.String("path", "/", "WebSocket path")
	mode := flag.String("mode", "echo", "echo or broadcast")
	connections := flag.Int("c", 16, "connections")
	duration := flag.Duration("d", 5*time.Second, "length of the run")
	size := flag.Int("size", 64, "message payload bytes (a text message)")
	control := flag.Bool("control", false, `print "connected", wait for "go" on stdin, close when stdin closes`)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	if *connections < 1 {
		return fmt.Errorf("-c %d: need at least one connection", *connections)
	}
	if *size < 1 {
		return fmt.Errorf("-size %d: need at least one byte", *size)
	}
	if *mode != "echo" && *mode != "broadcast" {
		return fmt.Errorf("-mode %q: echo or broadcast", *mode)
	}
	host := (*addr)[:max(strings.LastIndexByte(*addr, ':'), 0)]
	if !strings.HasPrefix(host, "127.") && host != "[::1]" && host != "localhost" {
		return fmt.Errorf("-addr %s: benchmarks target loopback only", *addr)
	}

	payload := []byte(strings.Repeat("m", *size))
	conns := make([]*wsclient.Conn, 0, *connections)
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	for range *connections {
		conn, _, err := wsclient.Dial(*addr, *path, 10*time.Second)
		if err != nil {
			return fmt.Errorf("connection %d of %d: %w", len(conns)+1, *connections, err)
		}
		conn.Prepare(wsclient.OpText, payload)
		conns = append(conns, conn)
	}

	stdin := bufio.NewReader(os.Stdin)
	if *control {
		fmt.Println("connected")
		line, err := stdin.ReadString('\n')
		if strings.TrimSpace(line) != "go" {
			return fmt.Errorf(`waiting for "go" on stdin: read %q (%v)`, line, err)
		}
	}
	var result wsclient.LoadResult
	var err error
	if *mode == "echo" {
		result, err = runEcho(conns, *duration)
	} else {
		result, err = runBroadcast(conns, *duration)
	}
	if err != nil {
		return err
	}
	line, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	fmt.Println(string(line))
	if *control {
		io.Copy(io.Discard, stdin) // until the harness has read the server's CPU
	}
	return nil
}
