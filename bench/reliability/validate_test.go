package main

import "testing"

func TestValidateResponses(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nok\r\n0\r\nTrailer-A: b\r\n\r\n"
	cases := []struct {
		name      string
		data      string
		closed    bool
		responses int
		invalid   bool
		cut       bool
	}{
		{"nothing, closed", "", true, 0, false, false},
		{"one", ok, false, 1, false, false},
		{"pipelined", ok + ok + chunked, true, 3, false, false},
		{"HTTP/1.0, no reason", "HTTP/1.0 400\r\nContent-Length: 0\r\n\r\n", true, 1, false, false},
		{"interim then final", "HTTP/1.1 100 Continue\r\n\r\n" + ok, false, 2, false, false},
		{"204 without a body", "HTTP/1.1 204 No Content\r\n\r\n" + ok, false, 2, false, false},
		{"close-delimited", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nbad request", true, 1, false, false},
		{"close-delimited, still open", "HTTP/1.1 200 OK\r\n\r\nabc", false, 1, false, true},
		{"upgrade", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x00", false, 1, false, false},
		{"body cut by the client", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false, 1, false, true},
		{"head cut by the client", "HTTP/1.1 200 OK\r\nConte", false, 0, false, true},
		{"chunk cut by the client", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", false, 1, false, true},

		{"body cut by the close", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true, 1, true, false},
		{"head cut by the close", "HTTP/1.1 200 OK\r\nConte", true, 0, true, false},
		{"chunked cut by the close", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n", true, 1, true, false},
		{"garbage", "hello\r\n\r\n", true, 0, true, false},
		{"garbage, short", "he", false, 0, true, false},
		{"HTTP/2", "HTTP/2 200 OK\r\n\r\n", true, 0, true, false},
		{"status 600", "HTTP/1.1 600 X\r\nContent-Length: 0\r\n\r\n", true, 0, true, false},
		{"status 2000", "HTTP/1.1 2000 X\r\nContent-Length: 0\r\n\r\n", true, 0, true, false},
		{"status 99", "HTTP/1.1 099 X\r\nContent-Length: 0\r\n\r\n", true, 0, true, false},
		{"bare LF head", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", true, 0, true, false},
		{"field without a colon", "HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n", true, 0, true, false},
		{"field name with a space", "HTTP/1.1 200 OK\r\nContent Length: 0\r\n\r\n", true, 0, true, false},
		{"folded field", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", true, 0, true, false},
		{"bare CR in a value", "HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n", true, 0, true, false},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", true, 0, true, false},
		{"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\na", true, 0, true, false},
		{"length and chunked", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true, 0, true, false},
		{"chunked not last", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", true, 0, true, false},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true, 1, true, false},
		{"chunk without its CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n", true, 1, true, false},
		{"garbage after a response", ok + "junk\r\n\r\n", true, 1, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := validateResponses([]byte(c.data), c.closed)
			if v.Responses != c.responses || (v.Invalid != "") != c.invalid || v.Incomplete != c.cut {
				t.Errorf("got %d responses, invalid %q, cut %v; want %d, %v, %v",
					v.Responses, v.Invalid, v.Incomplete, c.responses, c.invalid, c.cut)
			}
		})
	}
}

func TestValidateResponsesStatuses(t *testing.T) {
	v := validateResponses([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 413 Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), true)
	if len(v.Statuses) != 2 || v.Statuses[0] != 100 || v.Statuses[1] != 413 {
		t.Fatalf("statuses %v, want [100 413]", v.Statuses)
	}
}
