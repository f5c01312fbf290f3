package ws_test

import (
	"fmt"
	"strings"

	"github.com/m0serve/m0serve/ws"
)

// A server checks the upgrade request's head, then answers with the 101
// head or the refusal's status.
func ExampleAccept() {
	var req ws.Request
	req.Method = []byte("GET")
	req.HTTP11 = true
	for _, f := range [][2]string{
		{"Host", "example.com"},
		{"Upgrade", "websocket"},
		{"Connection", "keep-alive, Upgrade"},
		{"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
		{"Sec-WebSocket-Version", "13"},
		{"Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits"},
	} {
		req.AddHeader([]byte(f[0]), []byte(f[1]))
	}
	h, err := ws.Accept(&req, ws.Options{Compression: true})
	if err != nil {
		e := err.(*ws.HandshakeError)
		fmt.Println(e.Status, e.Header)
		return
	}
	fmt.Print(strings.ReplaceAll(string(h.AppendResponse(nil, nil, nil)), "\r\n", "\n"))
	// Output:
	// HTTP/1.1 101 Switching Protocols
	// Upgrade: websocket
	// Connection: Upgrade
	// Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=
	// Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover
}

// An echo loop: feed what was read, answer each message, and fail the
// connection with the error's close code.
func ExampleReader() {
	// "Hi" as a client sends it, masked, then a ping, then a close.
	read := []byte{
		0x81, 0x82, 1, 2, 3, 4, 'H' ^ 1, 'i' ^ 2,
		0x89, 0x80, 1, 2, 3, 4,
		0x88, 0x82, 1, 2, 3, 4, 0x03 ^ 1, 0xe8 ^ 2,
	}
	var r ws.Reader
	r.MaxMessage = 16 << 20
	var out []byte
	for p := read; len(p) > 0; {
		n, m, err := r.Feed(p)
		p = p[n:]
		if err != nil {
			out = ws.AppendClose(out, err.(*ws.Error).Code, "")
			break
		}
		switch m.Opcode {
		case ws.OpText, ws.OpBinary:
			out = ws.AppendMessage(out, m.Opcode, m.Payload, nil)
		case ws.OpPing:
			out = ws.AppendFrame(out, ws.OpPong, true, m.Payload)
		case ws.OpClose:
			out = ws.AppendClose(out, m.Code, "")
		}
	}
	fmt.Printf("% x\n", out)
	// Output:
	// 81 02 48 69 8a 00 88 02 03 e8
}
