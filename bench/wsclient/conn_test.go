package wsclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pythonServer starts testdata/server.py (Debian's python3-websockets,
// which make packages-test installs) and returns its address.
func pythonServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "testdata/server.py")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	port := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		port <- strings.TrimSpace(line)
	}()
	select {
	case p := <-port:
		if p == "" {
			cmd.Wait()
			t.Fatalf("testdata/server.py did not start (make packages-test installs python3-websockets): %s", stderr.String())
		}
		return "127.0.0.1:" + p
	case <-time.After(30 * time.Second):
		t.Fatalf("testdata/server.py printed no port: %s", stderr.String())
	}
	return ""
}

func dial(t *testing.T, addr, path string) *Conn {
	t.Helper()
	conn, handshake, err := Dial(addr, path, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if handshake.Status != 101 || handshake.ResponseBytes == 0 || len(handshake.HeaderOrder) == 0 {
		t.Errorf("handshake %+v: want a recorded 101", handshake)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestEchoFraming sends each payload length encoding of RFC 6455 (7-bit,
// 16-bit and 64-bit), as the prepared message and as a one-off, text
// and binary, and requires every message back intact.
func TestEchoFraming(t *testing.T) {
	conn := dial(t, pythonServer(t), "/echo")
	for _, size := range []int{0, 1, 125, 126, 127, 65535, 65536, 200000} {
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = 'a' + byte(i%26)
		}
		expectEcho := func(want byte, kind string) {
			t.Helper()
			opcode, got, err := conn.ReadMessage()
			if err != nil {
				t.Fatalf("%d bytes: %v", size, err)
			}
			if opcode != want || !bytes.Equal(got, payload) {
				t.Fatalf("%d-byte %s: got opcode %d and %d bytes", size, kind, opcode, len(got))
			}
		}
		conn.Prepare(OpText, payload)
		for range 2 { // the prepared frame is sent again unchanged
			if err := conn.Send(); err != nil {
				t.Fatal(err)
			}
			expectEcho(OpText, "text")
		}
		if err := conn.WriteMessage(OpBinary, payload); err != nil {
			t.Fatal(err)
		}
		expectEcho(OpBinary, "binary")
	}
}

// TestFragmentedMessage: a message in three frames reads as one.
func TestFragmentedMessage(t *testing.T) {
	conn := dial(t, pythonServer(t), "/fragments")
	opcode, got, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if opcode != OpText || string(got) != "onetwothree" {
		t.Fatalf("got opcode %d %q, want text %q", opcode, got, "onetwothree")
	}
}

// TestPingAnswered: the client answers a ping with its payload while it
// waits for a message, and the server sees the pong.
func TestPingAnswered(t *testing.T) {
	conn := dial(t, pythonServer(t), "/ping")
	_, got, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "pong seen" {
		t.Fatalf("got %q, want %q", got, "pong seen")
	}
}

// TestServerClose: a close frame ends reading with its code.
func TestServerClose(t *testing.T) {
	conn := dial(t, pythonServer(t), "/close")
	_, _, err := conn.ReadMessage()
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "code 4000") {
		t.Fatalf("got %v, want ErrClosed with code 4000", err)
	}
}

// TestRefusedUpgrade: an answer that is not a proper 101 is an error
// that says what came instead.
func TestRefusedUpgrade(t *testing.T) {
	for _, tc := range []struct{ answer, want string }{
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "status 200"},
		{"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Accept: wrong\r\n\r\n", "Sec-WebSocket-Accept"},
	} {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			bufio.NewReader(conn).ReadString('\n')
			io.WriteString(conn, tc.answer)
		}()
		_, _, err = Dial(listener.Addr().String(), "/", 10*time.Second)
		listener.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("answer %q: got %v, want an error naming %s", tc.answer, err, tc.want)
		}
	}
}
