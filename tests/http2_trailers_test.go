//go:build linux

package tests

import (
	"encoding/json"
	"testing"

	xhttp2 "golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestHTTP2RequestTrailersWSGI (issue 37): an HTTP/2 request's trailers
// reach a WSGI app as environ["m0serve.trailers"], a list of (name, value)
// filled once wsgi.input is read to its end (empty before), for a body of
// known length and one that ends with its stream; a body without trailers
// gets an empty list, a request without a body no key. On io_uring and
// epoll.
func TestHTTP2RequestTrailersWSGI(t *testing.T) {
	for _, v := range []variant{variants[0], variants[1]} {
		t.Run(v.name, func(t *testing.T) {
			s := startH2(t, v, false, "h2_hostile_app:application")
			c := dialH2(t, s)
			mu := newAtomicMutex()
			r := readH2(c, mu)
			type reply struct {
				Before [][2]string `json:"before"`
				After  [][2]string `json:"after"`
				Body   string      `json:"body"`
			}
			ask := func(id uint32, method string, length bool, body string, trailers [][2]string) reply {
				t.Helper()
				fields := [][2]string{{":method", method}, {":scheme", "http"}, {":authority", s.addr}, {":path", "/trailers"}}
				if length {
					fields = append(fields, [2]string{"content-length", "3"})
				}
				mu.Lock()
				c.writeRequest(t, id, fields, body == "")
				if body != "" {
					c.fr.WriteData(id, len(trailers) == 0, []byte(body))
				}
				if len(trailers) > 0 {
					c.buf.Reset()
					for _, f := range trailers {
						c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
					}
					c.fr.WriteHeaders(xhttp2.HeadersFrameParam{StreamID: id, BlockFragment: c.buf.Bytes(), EndStream: true, EndHeaders: true})
				}
				mu.Unlock()
				status, out, reset := r.streamEnd(t, id)
				if status != "200" || reset != nil {
					t.Fatalf("stream %d: %q %+v %q", id, status, reset, out)
				}
				var got reply
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("%v: %q", err, out)
				}
				return got
			}
			trailers := [][2]string{{"x-checksum", "900150983cd24fb0"}, {"x-count", "3"}}
			for i, length := range []bool{true, false} {
				got := ask(uint32(1+2*i), "POST", length, "abc", trailers)
				if got.Body != "abc" || len(got.Before) != 0 || len(got.After) != 2 ||
					got.After[0] != trailers[0] || got.After[1] != trailers[1] {
					t.Errorf("content-length %v: the app saw %+v, want the body and, after it, %q", length, got, trailers)
				}
			}
			if got := ask(5, "POST", true, "abc", nil); got.Body != "abc" || len(got.After) != 0 {
				t.Errorf("no trailers: the app saw %+v", got)
			}
			if got := ask(7, "GET", false, "", nil); len(got.After) != 1 || got.After[0][0] != "absent" {
				t.Errorf("no body: the app saw %+v, want no m0serve.trailers", got)
			}
			c.Close()
			checkNoTraceback(t, s.server)
		})
	}
}
