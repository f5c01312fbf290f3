package main

import (
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

// serveOnce answers every connection on a loopback listener with raw.
func serveOnce(t *testing.T, raw string) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			conn.Read(buf)
			io.WriteString(conn, raw)
			conn.Close()
		}
	}()
	return listener.Addr().String()
}

func TestParityAcceptsTheHelloResponse(t *testing.T) {
	raw := "HTTP/1.1 200 OK\r\nServer: m0\r\nDate: Mon, 30 Nov 2026 09:14:29 GMT\r\n" +
		"Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!"
	p, err := checkParity(serveOnce(t, raw), helloBody, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != 200 || p.ResponseBytes != len(raw) {
		t.Errorf("parity %+v, want status 200 and %d bytes", p, len(raw))
	}
	want := []string{"Server", "Date", "Content-Type", "Content-Length"}
	if !reflect.DeepEqual(p.HeaderOrder, want) {
		t.Errorf("header order %q, want %q", p.HeaderOrder, want)
	}
}

func TestParityRefusesOtherResponses(t *testing.T) {
	cases := map[string]string{
		"status": "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 13\r\n\r\nHello, World!",
		"body":   "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, world!",
		"short":  "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello",
	}
	for name, raw := range cases {
		if _, err := checkParity(serveOnce(t, raw), helloBody, 5*time.Second); err == nil {
			t.Errorf("%s: parity accepted %q", name, raw)
		} else if !strings.Contains(err.Error(), "parity") {
			t.Errorf("%s: error without context: %v", name, err)
		}
	}
}

func TestParityChecksTheArmsOwnBody(t *testing.T) {
	json := `{"message":"Hello, World!"}` + "\n"
	raw := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 28\r\n\r\n" + json
	addr := serveOnce(t, raw)
	flask := Arm{Name: "flask", ExpectBody: json}
	if _, err := checkParity(addr, flask.Body(), 5*time.Second); err != nil {
		t.Errorf("the arm's own body refused: %v", err)
	}
	if _, err := checkParity(addr, Arm{Name: "hello"}.Body(), 5*time.Second); err == nil {
		t.Error("a JSON body passed as the hello body")
	}
}

// A POST arm's parity request carries its body to its path; a length-
// checked arm passes on the length alone and fails on another.
func TestParityPostAndLength(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	got := make(chan string, 1)
	go func() {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var request strings.Builder
		buf := make([]byte, 4096)
		for !strings.HasSuffix(request.String(), `"quantity":4}`) {
			n, err := conn.Read(buf)
			if err != nil {
				break
			}
			request.Write(buf[:n])
		}
		got <- request.String()
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde")
	}()
	arm := Arm{Path: "/items", PostBody: `{"quantity":4}`, ContentType: "application/json", ExpectLength: 5}
	if _, err := checkArmParity(listener.Addr().String(), arm, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	request := <-got
	if !strings.HasPrefix(request, "POST /items HTTP/1.1\r\n") || !strings.Contains(request, "Content-Type: application/json\r\nContent-Length: 14\r\n\r\n") {
		t.Fatalf("request: %q", request)
	}
	arm.ExpectLength = 6
	if _, err := checkArmParity(serveOnce(t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde"), arm, 5*time.Second); err == nil || !strings.Contains(err.Error(), "want 6 bytes") {
		t.Fatalf("a 5-byte body against ExpectLength 6: %v", err)
	}
	if (Arm{PostBody: "x"}).Applies(Scenario{Name: "c16-pipe16", Connections: 16, PipelineDepth: 16}) {
		t.Error("a POST arm runs in the pipelined scenario")
	}
}
