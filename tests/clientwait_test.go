//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Clients that keep a WSGI handler thread waiting (a response they do not
// read, a body they trickle) do not hold up anyone else: a spare thread
// runs the app while the thread waits, and --threads still bounds the
// calls running at once.

// streamBlocks is the stalled response's length in 64 KiB blocks (1 GiB),
// far beyond what socket buffers and the outbox hold.
const streamBlocks = 16384

// stallStream asks for a 1 GiB response and reads none of it until the
// caller does; it returns once the app has handed its first block over.
func stallStream(t *testing.T, s *asgiServer, name string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /stream?%d&%s HTTP/1.1\r\nHost: h\r\n\r\n", streamBlocks, name)
	s.waitFile(t, name, "started")
	return c
}

// trickleBody declares a 1 MB body, sends more than the loop gathers
// before the request is queued (64 KiB), then trickles a byte at a time
// until stop is closed, when it sends the rest. It returns the body
// sent, for the caller to check the app's length and checksum.
func trickleBody(t *testing.T, s *asgiServer, stop <-chan struct{}, sent chan<- error) (net.Conn, []byte) {
	t.Helper()
	body := make([]byte, 1_000_000)
	for i := range body {
		body[i] = byte('a' + i%26 + i/65536)
	}
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n", len(body))
	const first = 70_000
	if _, err := c.Write(body[:first]); err != nil {
		t.Fatal(err)
	}
	go func() {
		at := first
		for {
			select {
			case <-stop:
				_, err := c.Write(body[at:])
				sent <- err
				return
			case <-time.After(200 * time.Millisecond):
				if _, err := c.Write(body[at : at+1]); err != nil {
					sent <- err
					return
				}
				at++
			}
		}
	}()
	return c, body
}

// getCounts sends n /count requests at once, each on its own connection,
// and fails unless every one is answered 200. The deadline bounds a
// failing test only: each is answered at once when a thread may run it.
func getCounts(t *testing.T, s *asgiServer, n int, sleepMillis int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- getOnce(s.addr, fmt.Sprintf("/count?%d", sleepMillis), "counted")
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a normal request while others wait on their clients: %v\n%s", err, s.logs)
		}
	}
}

func getOnce(addr, target, want string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", target)
	resp, err := readPlainResponse(bufio.NewReader(c))
	if err != nil {
		return err
	}
	if resp.status != 200 || resp.body != want {
		return fmt.Errorf("%s: %d %q", target, resp.status, resp.body)
	}
	return nil
}

type plainResponse struct {
	status int
	body   string
}

func readPlainResponse(br *bufio.Reader) (plainResponse, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return plainResponse{}, err
	}
	var r plainResponse
	if _, err := fmt.Sscanf(line, "HTTP/1.1 %d", &r.status); err != nil {
		return r, fmt.Errorf("status line %q: %w", line, err)
	}
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return r, err
		}
		if line == "\r\n" {
			break
		}
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "content-length") {
			fmt.Sscanf(strings.TrimSpace(value), "%d", &length)
		}
	}
	var body []byte
	if length >= 0 {
		body = make([]byte, length)
		_, err = io.ReadFull(br, body)
	} else {
		body, err = io.ReadAll(br)
	}
	r.body = string(body)
	return r, err
}

// mostRunning is the most /count calls the app saw running at once.
func mostRunning(t *testing.T, s *asgiServer) string {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, "GET /most HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
	resp, err := readPlainResponse(bufio.NewReader(c))
	if err != nil || resp.status != 200 {
		t.Fatalf("/most: %d %v", resp.status, err)
	}
	return resp.body
}

// readStream reads the stalled response whole and checks every block.
func readStream(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(120 * time.Second))
	br := bufio.NewReaderSize(c, 1<<20)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("the stalled response: %q %v", line, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	got := make([]byte, 65536)
	for i := 0; i < streamBlocks; i++ {
		if _, err := io.ReadFull(br, got); err != nil {
			t.Fatalf("the stalled response, block %d: %v", i, err)
		}
		if want := bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), 8192); !bytes.Equal(got, want) {
			t.Fatalf("the stalled response, block %d: starts %q", i, got[:16])
		}
	}
}

// TestSlowReaderWithOneThread: with the default --threads 1, a client
// that requests 1 GiB and reads none of it leaves the handler thread
// waiting on it; 20 other clients are served meanwhile, never two calls
// at once, and the stalled client then gets all its bytes.
func TestSlowReaderWithOneThread(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "clientwait_app:app", "--threads", "1", "--send-timeout", "300")
	stalled := stallStream(t, s, "stalled")
	getCounts(t, s, 20, 5)
	if got := mostRunning(t, s); got != "1" {
		t.Errorf("%s calls ran at once with --threads 1", got)
	}
	readStream(t, stalled)
}

// TestSlowBodyWithOneThread: with --threads 1 and no minimum body rate, a
// client trickling a 1 MB body a byte at a time leaves the handler thread
// waiting in wsgi.input.read(); 20 other clients are served meanwhile,
// and once the rest of the body comes the app gets it intact.
func TestSlowBodyWithOneThread(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "clientwait_app:app", "--threads", "1", "--body-min-rate", "0", "--body-timeout", "300")
	stop := make(chan struct{})
	sent := make(chan error, 1)
	c, body := trickleBody(t, s, stop, sent)
	getCounts(t, s, 20, 5)
	close(stop)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := readPlainResponse(bufio.NewReader(c))
	if want := fmt.Sprintf("%d %08x", len(body), crc32.ChecksumIEEE(body)); err != nil || resp.status != 200 || resp.body != want {
		t.Fatalf("the trickled body: %d %q %v, want %q", resp.status, resp.body, err, want)
	}
}

// TestClientWaitsKeepThreadBound: with --threads 2, two stalled readers
// and a trickled body (both handler threads and a spare waiting on
// clients), concurrent requests are all served and never more than two
// calls run at once.
func TestClientWaitsKeepThreadBound(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "clientwait_app:app", "--threads", "2", "--body-min-rate", "0", "--body-timeout", "300")
	stallStream(t, s, "first")
	stallStream(t, s, "second")
	stop := make(chan struct{})
	sent := make(chan error, 1)
	trickleBody(t, s, stop, sent)
	getCounts(t, s, 30, 20)
	if got := mostRunning(t, s); got != "2" && got != "1" {
		t.Errorf("%s calls ran at once with --threads 2", got)
	}
	close(stop)
	<-sent
}

// TestSlowClientsShed: more clients that never read their response than
// there are handler threads and spares (--threads 1, --max-client-waits
// 4: five) leave the others served: once every one waits on its client,
// the loop closes their connections at its next second, and logs it.
func TestSlowClientsShed(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "clientwait_app:app", "--threads", "1", "--max-client-waits", "4")
	for i := 0; i < 5; i++ {
		stallStream(t, s, fmt.Sprintf("stalled%d", i))
	}
	// Fifteen more, queued ahead of the normal requests.
	for i := 0; i < 15; i++ {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /stream?%d&late%d HTTP/1.1\r\nHost: h\r\n\r\n", streamBlocks, i)
	}
	getCounts(t, s, 10, 5)
	if !strings.Contains(s.logs.String(), "wait on slow clients (all that may run the app)") {
		t.Errorf("no log line for the shed clients:\n%s", s.logs)
	}
}

// TestSlowBodiesShed: the same with clients trickling their bodies (no
// --body-min-rate): they get 408 once every thread waits on one.
func TestSlowBodiesShed(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "clientwait_app:app", "--threads", "1", "--max-client-waits", "4", "--body-min-rate", "0", "--body-timeout", "300")
	stop := make(chan struct{})
	defer close(stop)
	sent := make(chan error, 8)
	for i := 0; i < 8; i++ {
		trickleBody(t, s, stop, sent)
	}
	getCounts(t, s, 10, 5)
	if !strings.Contains(s.logs.String(), "wait on slow clients (all that may run the app)") {
		t.Errorf("no log line for the shed clients:\n%s", s.logs)
	}
}
