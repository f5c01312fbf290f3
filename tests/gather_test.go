//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// TestInlineStreamIsNotGathered: a 200 MiB streamed WSGI response served
// from the I/O thread (--threads 0, and --wsgi-inline auto) is gathered
// only up to 1 MiB there; a handler thread sends the rest as the client
// reads it. The bytes arrive intact, chunked, and the server's resident
// memory stays far under the body's size (it was the whole body, twice,
// before: 230 MB).
func TestInlineStreamIsNotGathered(t *testing.T) {
	for _, args := range [][]string{{"--threads", "0"}, {"--threads", "1", "--wsgi-inline", "auto"}} {
		t.Run(args[1], func(t *testing.T) {
			s := startWSGI(t, "stream_app:app", args...)
			pid := s.cmd.Process.Pid
			c := dial(t, s)
			defer c.Close()
			br := bufio.NewReader(c)
			warmInline(t, br, c)
			fmt.Fprint(c, "GET /stream?mb=1 HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, body := readResponseTo(t, br, "GET"); resp.StatusCode != 200 || len(body) != 1<<20 {
				t.Fatalf("/stream?mb=1: %d with %d bytes", resp.StatusCode, len(body))
			}
			base := processRSS(t, pid)

			const mb = 200
			fmt.Fprintf(c, "GET /stream?mb=%d HTTP/1.1\r\nHost: x\r\n\r\n", mb)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
				t.Fatalf("status %d, transfer encoding %v: want 200, chunked", resp.StatusCode, resp.TransferEncoding)
			}
			block := make([]byte, 64<<10)
			peak := base
			for i := 0; i < mb*16; i++ {
				if _, err := io.ReadFull(resp.Body, block); err != nil {
					t.Fatalf("block %d: %v", i, err)
				}
				if want := []byte(fmt.Sprintf("%08d", i)); !bytes.Equal(block[:8], want) || !bytes.Equal(block[len(block)-8:], want) {
					t.Fatalf("block %d starts %q, ends %q", i, block[:8], block[len(block)-8:])
				}
				if i%64 == 0 {
					peak = max(peak, processRSS(t, pid))
				}
			}
			if n, err := io.Copy(io.Discard, resp.Body); n != 0 || err != nil {
				t.Fatalf("%d bytes past the body: %v", n, err)
			}
			// A generous bound: the mechanism holds 1 MiB and the loop's
			// buffers; gathering the body would be 200 MiB and more.
			if grown := peak - base; grown > 64<<20 {
				t.Fatalf("resident memory grew %d MiB during a %d MiB response (from %d MiB), want under 64", grown>>20, mb, base>>20)
			}
			t.Logf("resident: %d MiB before, %d at the peak", base>>20, peak>>20)

			// The connection goes on: the next request is served.
			fmt.Fprint(c, "GET /stream?mb=1 HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, body := readResponseTo(t, br, "GET"); resp.StatusCode != 200 || len(body) != 1<<20 {
				t.Fatalf("after: %d with %d bytes", resp.StatusCode, len(body))
			}
		})
	}
}

// warmInline sends enough quick GET /ok requests for --wsgi-inline auto
// to run the next on the I/O thread (it starts an app handed off).
func warmInline(t *testing.T, br *bufio.Reader, c io.Writer) {
	t.Helper()
	for i := 0; i < 100; i++ {
		fmt.Fprint(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, body := readResponseTo(t, br, "GET"); resp.StatusCode != 200 || body != "ok" {
			t.Fatalf("GET /ok: %d %q", resp.StatusCode, body)
		}
	}
}
