package loop

import (
	"io"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// A request's trailers reach a Go handler once it has read the body to
// its end, in the order sent (issue 37: the loop delivered none).
func TestHTTP2RequestTrailers(t *testing.T) {
	work := func(j *Job) {
		var before, after []string
		j.RequestTrailers(func(name, value string) { before = append(before, name+"="+value) })
		body, _ := io.ReadAll(j)
		j.RequestTrailers(func(name, value string) { after = append(after, name+"="+value) })
		j.SetHeader("X-Body", string(body))
		j.SetHeader("X-Before", strings.Join(before, ","))
		j.SetHeader("X-Trailers", strings.Join(after, ","))
		j.Finish()
	}
	deferredHarness(t, deferEverything, work, h2Config)(func(t *testing.T, hs *harness) {
		cl := newH2Client()
		c := hs.connect()
		hs.fb.write(c, cl.open())
		hs.fb.write(c, cl.headers(1, "POST", "/trailers", false))
		cl.fr.WriteData(1, false, []byte("abc"))
		cl.blk.Reset()
		cl.enc.WriteField(hpack.HeaderField{Name: "x-checksum", Value: "900150983cd24fb0"})
		cl.enc.WriteField(hpack.HeaderField{Name: "x-count", Value: "3"})
		cl.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: cl.blk.Bytes(), EndStream: true, EndHeaders: true})
		hs.fb.write(c, cl.take())
		s := hs.h2Ended(c, 1)
		if s.fields[":status"] != "200" || s.fields["x-body"] != "abc" || s.fields["x-before"] != "" ||
			s.fields["x-trailers"] != "x-checksum=900150983cd24fb0,x-count=3" {
			t.Fatalf("%+v", s.fields)
		}
	})
}
