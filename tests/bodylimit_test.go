//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestChunkedBodyLimit: --max-body-size holds against a chunked body's
// declared chunk sizes, on each backend. A body summing to the limit is
// echoed; a chunk size that takes it one byte past gets 413 and a close
// while the client has sent none of that chunk's data.
func TestChunkedBodyLimit(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "echo", "--max-body-size", "1000")
		const head = "POST /e?raw HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
		first := strings.Repeat("a", 600)
		chunk := func(data string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(data), data) }

		t.Run("at the limit", func(t *testing.T) {
			c := dial(t, s)
			defer c.Close()
			rest := strings.Repeat("b", 400)
			if _, err := io.WriteString(c, head+chunk(first)+chunk(rest)+"0\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, body := readResponseTo(t, bufio.NewReader(c), "POST")
			if resp.StatusCode != 200 || body != first+rest {
				t.Fatalf("status %d, %d bytes echoed; want 200 and the 1000 bytes", resp.StatusCode, len(body))
			}
		})

		t.Run("one byte over, before its data", func(t *testing.T) {
			c := dial(t, s)
			defer c.Close()
			// 0x191 = 401 bytes declared after the 600: 1001. The data is
			// never sent: the answer must not wait for it.
			if _, err := io.WriteString(c, head+chunk(first)+"191\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, _ := readResponseTo(t, bufio.NewReader(c), "POST")
			if resp.StatusCode != 413 || !resp.Close {
				t.Fatalf("status %d (close %v), want 413 and close", resp.StatusCode, resp.Close)
			}
		})
	})
}
