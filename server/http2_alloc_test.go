//go:build linux

package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestWSGIHTTP2AllocatesNothing is TestWSGIRequestAllocatesNothing over
// HTTP/2 (h2c by prior knowledge): in steady state a stream's request and
// response allocate nothing, the client included, which sends what a
// real one does once its HPACK table holds the fields: every field
// indexed.
func TestWSGIHTTP2AllocatesNothing(t *testing.T) {
	if !inOwnProcess(t, "TestWSGIHTTP2AllocatesNothing") {
		return
	}
	checkH2RequestsAllocateNothing(t, "hello_wsgi:app", "Hello, World!", "line 4\n")
}

// TestASGIHTTP2AllocatesNothing is the same for the ASGI app.
func TestASGIHTTP2AllocatesNothing(t *testing.T) {
	if !inOwnProcess(t, "TestASGIHTTP2AllocatesNothing") {
		return
	}
	checkH2RequestsAllocateNothing(t, "hello_asgi:app", "Hello, World!\n", "line 9\n")
}

func checkH2RequestsAllocateNothing(t *testing.T, app, hello, streamEnd string) {
	addr, stop := serveForAllocs(t, app)
	defer stop()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	// The preface, a window of 1 GiB for every stream and the connection.
	open := []byte(http2.ClientPreface)
	open = appendFrame(open, http2.FrameSettings, 0, 0, []byte{0, 4, 0x40, 0, 0, 0})
	open = appendFrame(open, http2.FrameWindowUpdate, 0, 0, []byte{0x40, 0, 0, 0})
	if _, err := conn.Write(open); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	encode := func(fields [][2]string) []byte {
		block.Reset()
		for _, f := range fields {
			enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		return bytes.Clone(block.Bytes())
	}
	id := uint32(1)
	payload := make([]byte, 64<<10)
	head := make([]byte, 9)
	body := make([]byte, 0, 64<<10)
	for _, tc := range []struct {
		name, method, path, body, end string
	}{
		{"whole body", "GET", "/", "", hello},
		{"streamed body", "GET", "/stream", "", streamEnd},
		{"request body", "POST", "/echo", "hello", "hello"},
	} {
		fields := [][2]string{{":method", tc.method}, {":scheme", "http"}, {":authority", "x"}, {":path", tc.path}}
		if tc.body != "" {
			fields = append(fields, [2]string{"content-length", fmt.Sprint(len(tc.body))})
		}
		// The first request's block indexes its fields; every later one
		// refers to them.
		first, later := encode(fields), encode(fields)
		frames := func(block []byte) []byte {
			var flags uint8 = 0x4 // END_HEADERS
			if tc.body == "" {
				flags |= 0x1 // END_STREAM
			}
			b := appendFrame(nil, http2.FrameHeaders, flags, 0, block)
			if tc.body != "" {
				b = appendFrame(b, http2.FrameData, 0x1, 0, []byte(tc.body))
			}
			return b
		}
		firstFrames, laterFrames := frames(first), frames(later)
		roundTrip := func(request []byte) {
			// The stream id of each frame.
			binary.BigEndian.PutUint32(request[5:9], id)
			if tc.body != "" {
				binary.BigEndian.PutUint32(request[len(request)-len(tc.body)-9+5:], id)
			}
			if _, err := conn.Write(request); err != nil {
				t.Fatal(err)
			}
			body = body[:0]
			for {
				if _, err := io.ReadFull(br, head); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				n := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
				if _, err := io.ReadFull(br, payload[:n]); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if binary.BigEndian.Uint32(head[5:9])&(1<<31-1) != id {
					continue // SETTINGS, its ack, WINDOW_UPDATE
				}
				switch http2.FrameType(head[3]) {
				case http2.FrameData:
					body = append(body, payload[:n]...)
				case http2.FrameRSTStream:
					t.Fatalf("%s: stream %d reset", tc.name, id)
				}
				if head[4]&0x1 != 0 { // END_STREAM
					break
				}
			}
			if !bytes.HasSuffix(body, []byte(tc.end)) {
				t.Fatalf("%s: body %q, want it to end with %q", tc.name, body, tc.end)
			}
			id += 2
		}
		roundTrip(firstFrames)
		for i := 0; i < 200; i++ { // the job pool, arenas and caches grow to size
			roundTrip(laterFrames)
		}
		if allocs := testing.AllocsPerRun(500, func() { roundTrip(laterFrames) }); allocs > 0 {
			t.Errorf("%s: %.2f allocations per request, want 0", tc.name, allocs)
		}
	}
}

// appendFrame appends a frame (RFC 9113 §4.1).
func appendFrame(b []byte, typ http2.FrameType, flags uint8, stream uint32, payload []byte) []byte {
	n := len(payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), byte(typ), flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, payload...)
}
