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
	p, err := checkParity(serveOnce(t, raw), helloBody, 5*time.Second, false)
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
		if _, err := checkParity(serveOnce(t, raw), helloBody, 5*time.Second, false); err == nil {
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
	if _, err := checkParity(addr, flask.Body(), 5*time.Second, false); err != nil {
		t.Errorf("the arm's own body refused: %v", err)
	}
	if _, err := checkParity(addr, Arm{Name: "hello"}.Body(), 5*time.Second, false); err == nil {
		t.Error("a JSON body passed as the hello body")
	}
}
