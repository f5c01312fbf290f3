package loop

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// echoBody answers with the body it read, with its length.
func echoBody(j *Job) {
	body, err := io.ReadAll(j)
	if err != nil {
		j.Finish()
		return
	}
	j.SetHeader("X-Method", string(j.Request.Bytes(j.Request.Method)))
	j.WriteHeader(200, int64(len(body)))
	j.Write(body)
	j.Finish()
}

func TestDeferredBodyStreaming(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 20000) // 320 kB: several inbox fills
	cases := []struct{ name, head, body string }{
		{"content-length", fmt.Sprintf("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body)), body},
		{"chunked", "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", chunk(body[:100000]) + chunk(body[100000:]) + "0\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			deferredHarness(t, deferEverything, echoBody, nil)(func(t *testing.T, hs *harness) {
				c := hs.connect()
				raw := tc.head + tc.body + "GET /next HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
				for i := 0; i < len(raw); i += 7001 {
					hs.fb.write(c, raw[i:min(i+7001, len(raw))])
					hs.passes(1)
				}
				got := hs.responses(c, 2)
				if !strings.HasSuffix(got[0], "\r\n\r\n"+body) {
					t.Fatalf("echoed body differs (response %d bytes)", len(got[0]))
				}
				if !strings.Contains(got[1], "X-Method: GET") {
					t.Fatalf("pipelined request after the body:\n%s", got[1])
				}
			})
		})
	}
}

func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

func TestExpectContinue(t *testing.T) {
	t.Run("deferred reader gets 100 first", func(t *testing.T) {
		deferredHarness(t, deferEverything, echoBody, nil)(func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
			got := hs.responses(c, 1)[0]
			if got != continue100 {
				t.Fatalf("want the 100 alone first, got %q", got)
			}
			hs.fb.write(c, "hello")
			got2 := hs.responses(c, 2)[1]
			if !strings.HasSuffix(got2, "\r\n\r\nhello") || strings.Contains(got2, "Connection: close") {
				t.Fatalf("final response:\n%s", got2)
			}
		})
	})
	t.Run("inline handler: no 100, close", func(t *testing.T) {
		hs := newHarness(t, hello, nil)
		hs.t = t
		c := hs.connect()
		hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
		got := hs.responses(c, 1)[0]
		if !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.Contains(got, "Connection: close") {
			t.Fatalf("response:\n%s", got)
		}
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
	})
}

func TestChunkedBodyOverLimit(t *testing.T) {
	deferredHarness(t, deferEverything, echoBody, func(c *Config) { c.MaxBodySize = 1000 })(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk(strings.Repeat("a", 800))+chunk(strings.Repeat("b", 800)))
		got := hs.responses(c, 1)[0]
		if !strings.HasPrefix(got, "HTTP/1.1 413 ") {
			t.Fatalf("want 413:\n%s", got)
		}
		hs.lingerThenClose(c)
	})
}

// TestChunkedBodyLimitOnDeclaredSize: the limit holds against the chunk
// sizes as they are declared. A body summing to the limit is served; a
// chunk size that takes it past the limit is refused on sight, with no
// byte of that chunk sent.
func TestChunkedBodyLimitOnDeclaredSize(t *testing.T) {
	const head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	first := chunk(strings.Repeat("a", 600))
	limit := func(c *Config) { c.MaxBodySize = 1000 }
	t.Run("deferred: at the limit", func(t *testing.T) {
		deferredHarness(t, deferEverything, echoBody, limit)(func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+chunk(strings.Repeat("b", 400))+"0\r\n\r\n")
			got := hs.responses(c, 1)[0]
			if !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.HasSuffix(got, strings.Repeat("b", 400)) {
				t.Fatalf("want the 1000 bytes echoed:\n%s", got)
			}
		})
	})
	t.Run("deferred: one byte over, declared", func(t *testing.T) {
		deferredHarness(t, deferEverything, echoBody, limit)(func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+"191\r\n") // 401 more: 1001
			got := hs.responses(c, 1)[0]
			if !strings.HasPrefix(got, "HTTP/1.1 413 ") || !strings.Contains(got, "Connection: close") {
				t.Fatalf("want 413 and close:\n%s", got)
			}
			hs.lingerThenClose(c)
		})
	})
	t.Run("inline: at the limit, then the next request", func(t *testing.T) {
		eachMode(t, hello, limit, func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+chunk(strings.Repeat("b", 400))+"0\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			if got := hs.responses(c, 2)[1]; !strings.Contains(got, "X-Path: /next") {
				t.Fatalf("second response:\n%s", got)
			}
		})
	})
	t.Run("inline: one byte over, declared", func(t *testing.T) {
		eachMode(t, hello, limit, func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+"191\r\n")
			// The answer went out before the body; the connection cannot
			// go on past a body it refuses.
			hs.until("close", func() bool { return hs.fb.isClosed(c) })
		})
	})
}

func TestDeferredBodyHeldToDeclaredLength(t *testing.T) {
	cases := []struct {
		name, write, want string
	}{
		{"longer than declared", "hello", "hel"},
		{"shorter than declared", "h", "h"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			work := func(j *Job) {
				j.WriteHeader(200, 3)
				j.Write([]byte(tc.write))
				j.Finish()
			}
			deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
				c := hs.connect()
				hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				hs.until("close", func() bool { return hs.fb.isClosed(c) })
				out := hs.fb.output(c)
				if !strings.Contains(out, "Content-Length: 3\r\n") || !strings.HasSuffix(out, "\r\n\r\n"+tc.want) {
					t.Fatalf("output:\n%q", out)
				}
			})
		})
	}
}
