package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/m0serve/m0serve/bench/wsclient"
)

// helloBody is what every arm answers unless it names another body
// (Arm.ExpectBody); an arm that answers anything else is not measured.
const helloBody = "Hello, World!"

// Parity is what one GET to an arm returned, kept in the results so
// differences in response size between arms are on record.
type Parity struct {
	Status        int      `json:"status"`
	ResponseBytes int      `json:"response_bytes"`
	HeaderOrder   []string `json:"header_order"`
}

// checkParity sends one GET over a fresh connection and requires status
// 200 and the body want.
func checkParity(addr, want string, timeout time.Duration) (Parity, error) {
	return checkArmParity(addr, Arm{ExpectBody: want}, timeout)
}

// checkArmParity sends the arm's request (its path; a POST of its body
// where it has one) over a fresh connection and requires status 200 and
// the arm's body, or a body of its ExpectLength.
func checkArmParity(addr string, arm Arm, timeout time.Duration) (Parity, error) {
	var p Parity
	want := arm.Body()
	if arm.HTTP2 {
		return checkH2Parity(addr, arm, timeout)
	}
	var conn net.Conn
	var err error
	if arm.TLS {
		// The throwaway certificate of make bench-tls: nothing to verify.
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	} else {
		conn, err = net.DialTimeout("tcp", addr, timeout)
	}
	if err != nil {
		return p, fmt.Errorf("parity: dial %s: %w", addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return p, fmt.Errorf("parity: deadline: %w", err)
	}
	request := "GET " + arm.Target() + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	if arm.Posts() {
		body := arm.RequestBody()
		request = fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
			arm.Target(), addr, arm.ContentType, len(body), body)
	}
	if _, err := io.WriteString(conn, request); err != nil {
		return p, fmt.Errorf("parity: send to %s: %w", addr, err)
	}
	var raw bytes.Buffer
	response, err := http.ReadResponse(bufio.NewReader(io.TeeReader(conn, &raw)), nil)
	if err != nil {
		return p, fmt.Errorf("parity: read response from %s: %w", addr, err)
	}
	body, err := io.ReadAll(response.Body)
	response.Body.Close()
	if err != nil {
		return p, fmt.Errorf("parity: read body from %s: %w", addr, err)
	}
	p.Status = response.StatusCode
	p.ResponseBytes = raw.Len()
	p.HeaderOrder = wsclient.HeaderOrder(raw.Bytes())
	if response.StatusCode != http.StatusOK {
		return p, fmt.Errorf("parity: %s answered status %d, want 200", addr, response.StatusCode)
	}
	if arm.ExpectBody == "" && arm.ExpectLength > 0 {
		if len(body) != arm.ExpectLength {
			return p, fmt.Errorf("parity: %s answered a %d-byte body, want %d bytes", addr, len(body), arm.ExpectLength)
		}
		return p, nil
	}
	if string(body) != want {
		shown := body
		if len(shown) > 64 {
			shown = shown[:64] // an HTML page in a log line helps nobody
		}
		return p, fmt.Errorf("parity: %s answered a %d-byte body %q, want %q", addr, len(body), shown, want)
	}
	return p, nil
}

// checkH2Parity is checkArmParity for an HTTP/2 arm, with Go's client
// speaking HTTP/2 alone (h2c by prior knowledge, or h2 over TLS).
func checkH2Parity(addr string, arm Arm, timeout time.Duration) (Parity, error) {
	var p Parity
	var protocols http.Protocols
	tr := &http.Transport{Protocols: &protocols, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	scheme := "http://"
	if arm.TLS {
		protocols.SetHTTP2(true)
		scheme = "https://"
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	client := &http.Client{Transport: tr, Timeout: timeout}
	defer client.CloseIdleConnections()
	resp, err := client.Get(scheme + addr + arm.Target())
	if err != nil {
		return p, fmt.Errorf("parity: %s over HTTP/2: %w", addr, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return p, fmt.Errorf("parity: read body from %s: %w", addr, err)
	}
	p.Status, p.ResponseBytes = resp.StatusCode, len(body)
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		return p, fmt.Errorf("parity: %s answered %s over %s, want 200 over HTTP/2", addr, resp.Status, resp.Proto)
	}
	if string(body) != arm.Body() {
		return p, fmt.Errorf("parity: %s answered %q, want %q", addr, body, arm.Body())
	}
	return p, nil
}
