//go:build linux

package tests

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	xhttp2 "golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The floods of tests/http2_test.go, sent by a raw client.

// h2Conn is a raw HTTP/2 client connection, for what clients do not do.
type h2Conn struct {
	net.Conn
	fr  *xhttp2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
}

func dialH2(t *testing.T, s *h2Server) *h2Conn {
	t.Helper()
	var nc net.Conn
	var err error
	if s.tls {
		nc, err = tls.Dial("tcp", s.addr, &tls.Config{RootCAs: s.ca.Pool, NextProtos: []string{"h2"}})
	} else {
		nc, err = net.Dial("tcp", s.addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	c := &h2Conn{Conn: nc}
	c.fr = xhttp2.NewFramer(nc, nc)
	c.enc = hpack.NewEncoder(&c.buf)
	if _, err := io.WriteString(nc, xhttp2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := c.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return c
}

// request sends a bodyless request on stream id.
func (c *h2Conn) request(id uint32, authority, path string) error {
	c.buf.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", authority}, {":path", path}} {
		c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: id, BlockFragment: c.buf.Bytes(),
		EndStream: true, EndHeaders: true})
}

// testH2RapidReset: a client opens streams and resets each at once
// (CVE-2023-44487). The server closes that connection with
// ENHANCE_YOUR_CALM once the resets pass its budget, and serves others
// throughout.
func testH2RapidReset(t *testing.T, s *h2Server) {
	c := dialH2(t, s)
	done := make(chan error, 1)
	go func() {
		for id := uint32(1); id < 2*2000; id += 2 {
			if c.request(id, s.addr, slowPath) != nil || c.fr.WriteRSTStream(id, xhttp2.ErrCodeCancel) != nil {
				break // the server closed the connection under the burst
			}
		}
		done <- nil
	}()
	var goAway *xhttp2.GoAwayFrame
	for goAway == nil {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the flooding connection: %v (no GOAWAY)", err)
		}
		if g, ok := f.(*xhttp2.GoAwayFrame); ok {
			goAway = g
		}
	}
	if goAway.ErrCode != xhttp2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", goAway.ErrCode)
	}
	c.Close()
	<-done
	client := s.client()
	defer client.CloseIdleConnections()
	resp, err := client.Post(s.url("/after-flood?raw"), "text/plain", strings.NewReader("still here"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readBody(t, resp); resp.StatusCode != 200 {
		t.Fatalf("after the flood: %s %q", resp.Status, got)
	}
}

// testH2Floods: a header list over the limit (an HPACK bomb's first
// step) is answered 431 on its stream; a header block that goes on in
// CONTINUATION frames past what any list may take (CVE-2024-27316) ends
// its connection with ENHANCE_YOUR_CALM; other clients are served
// throughout.
func testH2Floods(t *testing.T, s *h2Server) {
	c := dialH2(t, s)
	fields := [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", s.addr}, {":path", "/bomb"}}
	for i := 0; i < 40; i++ {
		fields = append(fields, [2]string{fmt.Sprintf("x-bomb-%d", i), strings.Repeat("b", 500)})
	}
	block := func() []byte {
		c.buf.Reset()
		for _, f := range fields {
			c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		return bytes.Clone(c.buf.Bytes())
	}
	if err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: 1, BlockFragment: block(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	dec := hpack.NewDecoder(4096, nil)
	for status := ""; status == ""; {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("a header list over the limit: %v", err)
		}
		if h, ok := f.(*xhttp2.HeadersFrame); ok && h.StreamID == 1 {
			got, err := dec.DecodeFull(h.HeaderBlockFragment())
			if err != nil {
				t.Fatal(err)
			}
			status = got[0].Value
			if status != "431" {
				t.Fatalf("a header list over the limit: %v", got)
			}
		}
	}
	// Four times the fields, cut into CONTINUATION frames of 1 KiB.
	for i := 40; i < 200; i++ {
		fields = append(fields, [2]string{fmt.Sprintf("x-flood-%d", i), strings.Repeat("f", 500)})
	}
	flood := block()
	err := c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: 3, BlockFragment: flood[:1024], EndStream: true})
	for rest := flood[1024:]; err == nil && len(rest) > 0; {
		n := min(1024, len(rest))
		err = c.fr.WriteContinuation(3, n == len(rest), rest[:n])
		rest = rest[n:]
	}
	var goAway *xhttp2.GoAwayFrame
	for goAway == nil {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("a CONTINUATION flood: %v (no GOAWAY)", err)
		}
		goAway, _ = f.(*xhttp2.GoAwayFrame)
	}
	if goAway.ErrCode != xhttp2.ErrCodeEnhanceYourCalm {
		t.Fatalf("a CONTINUATION flood: GOAWAY %v", goAway.ErrCode)
	}
	client := s.client()
	defer client.CloseIdleConnections()
	resp, err := client.Get(s.url("/after-floods"))
	if err != nil {
		t.Fatal(err)
	}
	if readBody(t, resp); resp.StatusCode != 200 {
		t.Fatalf("after the floods: %s", resp.Status)
	}
}
