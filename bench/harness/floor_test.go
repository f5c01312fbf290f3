package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startFloor builds the C floor and runs it through startServer, as the
// harness does, on a port the kernel picked free.
func startFloor(t *testing.T) (*Server, string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed: the floor cannot be built")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "floor")
	if out, err := exec.Command("gcc", "-O2", "-Wall", "-o", binary, "../peers/floor/floor.c").CombinedOutput(); err != nil {
		t.Fatalf("build floor: %v: %s", err, out)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	arm := Arm{Name: "floor", Command: []string{binary, "-addr", "{addr}"}}
	server, err := startServer(arm, dir, "127.0.0.1", port, "0", filepath.Join(dir, "floor.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Stop(3 * time.Second) })
	if err := server.WaitReady("127.0.0.1", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return server, server.Addr("127.0.0.1")
}

func TestFloorAnswersEachPipelinedRequest(t *testing.T) {
	_, addr := startFloor(t)
	if _, err := checkParity(addr, helloBody, 5*time.Second, false); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// Three requests, the terminators split across writes.
	for _, part := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r",
		"\nGET / HTTP/1.1\r\n",
		"Host: x\r\n\r\n",
	} {
		if _, err := io.WriteString(conn, part); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // lets each part arrive as its own read
	}
	reader := bufio.NewReader(conn)
	for i := 0; i < 3; i++ {
		response, err := http.ReadResponse(reader, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i+1, err)
		}
		body, _ := io.ReadAll(response.Body)
		if response.StatusCode != 200 || string(body) != helloBody || response.Header.Get("Server") != "m0serve" {
			t.Fatalf("response %d: %d %q %v", i+1, response.StatusCode, body, response.Header)
		}
	}
}

func TestFloorClosesAfterConnectionClose(t *testing.T) {
	_, addr := startFloor(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	all, err := io.ReadAll(conn) // returns only once the floor closes
	if err != nil {
		t.Fatal(err)
	}
	text := string(all)
	if n := strings.Count(text, "HTTP/1.1 200 OK"); n != 2 {
		t.Errorf("%d responses, want 2:\n%q", n, text)
	}
	if strings.Count(text, "Connection: close") != 1 || !strings.HasSuffix(text, "Connection: close\r\n\r\nHello, World!") {
		t.Errorf("the last response should carry Connection: close:\n%q", text)
	}
}

func TestServerStopEndsTheProcessAndTicksAreRead(t *testing.T) {
	server, _ := startFloor(t)
	clock := newCPUClock()
	if _, err := clock.Ticks(server.Pid()); err != nil {
		t.Fatalf("ticks of a running server: %v", err)
	}
	server.Stop(3 * time.Second)
	if server.Alive() {
		t.Fatal("server alive after Stop")
	}
	if _, err := clock.Ticks(server.Pid()); err == nil {
		t.Error("ticks read from a stopped server")
	}
}
