package pybridge

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/http1"
)

// post serves a POST of body, delivered in the given pieces.
func post(t *testing.T, app *App, path string, chunked bool, body ...string) *Job {
	t.Helper()
	total := 0
	list := make([][]byte, len(body))
	for i, b := range body {
		list[i] = []byte(b)
		total += len(b)
	}
	framing := "Content-Length: " + strconv.Itoa(total)
	if chunked {
		framing = "Transfer-Encoding: chunked"
	}
	j := newJob(t, app, "POST "+path+" HTTP/1.1\r\nHost: x\r\n"+framing+"\r\n\r\n")
	j.Body = &pieces{list: list}
	run(j)
	return j
}

func TestInputReads(t *testing.T) {
	app := loadApp(t, "input_app:app")
	body := []string{"ab", "c\nde", "f\n\ng", "hi"} // "abc\ndef\n\nghi" in four pieces
	cases := []struct {
		path string
		want string
	}{
		{"/read3", "b'abc'\nb'\\nde'\nb'f\\n\\n'\nb'ghi'\nb''\n"},
		{"/read", "b'abc\\ndef\\n\\nghi'\nb''\n"},
		{"/readline", "b'abc\\n'\nb'def\\n'\nb'\\n'\nb'ghi'\nb''\n"},
		{"/readline4", "b'abc\\n'\nb'def\\n'\nb'\\n'\nb'ghi'\nb''\n"},
		{"/readlines", "b'abc\\n'\nb'def\\n'\nb'\\n'\nb'ghi'\n"},
		{"/iter", "b'abc\\n'\nb'def\\n'\nb'\\n'\nb'ghi'\n"},
		{"/mixed", "b'abc\\n'\nb'de'\nb'f\\n\\nghi'\n"},
	}
	for _, c := range cases {
		for _, chunked := range []bool{false, true} {
			name := c.path
			if chunked {
				name += "/chunked"
			}
			t.Run(name, func(t *testing.T) {
				j := post(t, app, c.path, chunked, body...)
				if got := string(j.Response.Body()); got != c.want {
					t.Errorf("got\n%s\nwant\n%s", got, c.want)
				}
			})
		}
	}
}

func TestInputReadlineLimit(t *testing.T) {
	app := loadApp(t, "input_app:app")
	j := post(t, app, "/readline4", false, "abcdefgh\nij")
	want := "b'abcd'\nb'efgh'\nb'\\n'\nb'ij'\nb''\n"
	if got := string(j.Response.Body()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The Content-Length caps reads even if the reader had more to give.
func TestInputNeverPastContentLength(t *testing.T) {
	app := loadApp(t, "input_app:app")
	j := newJob(t, app, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("12345NEXT REQUEST")}}
	run(j)
	if got, want := string(j.Response.Body()), "b'12345'\nb''\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestInputLargeBody(t *testing.T) {
	app := loadApp(t, "input_app:app")
	big := strings.Repeat("0123456789abcdef", 10000) // 160 000 bytes
	for _, chunked := range []bool{false, true} {
		var list []string
		for i := 0; i < len(big); i += 7000 {
			list = append(list, big[i:min(i+7000, len(big))])
		}
		j := post(t, app, "/read", chunked, list...)
		if want := "b'" + big + "'\nb''\n"; string(j.Response.Body()) != want {
			t.Errorf("chunked=%v: body of %d bytes differs", chunked, len(j.Response.Body()))
		}
	}
}

// A body that breaks off is an OSError in the app; when the app lets it
// through, the request aborts without a traceback: the client's fault, not
// the app's, and the server has the reader's error.
func TestInputShortBody(t *testing.T) {
	app := loadApp(t, "input_app:app")
	j := newJob(t, app, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("123")}}
	run(j)
	if j.Response.Outcome() != Aborted || j.Response.AppError() {
		t.Errorf("ended early: outcome %d app error %v, want an abort not blamed on the app", j.Response.Outcome(), j.Response.AppError())
	}
	j = newJob(t, app, "POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("123")}, err: errors.New("bad chunk size")}
	run(j)
	if j.Response.Outcome() != Aborted || j.Response.AppError() || j.BodyErr == nil || j.BodyErr.Error() != "bad chunk size" {
		t.Errorf("reader failed: outcome %d app error %v BodyErr %v", j.Response.Outcome(), j.Response.AppError(), j.BodyErr)
	}
	// The app may catch it and answer anyway.
	j = newJob(t, app, "POST /catch HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("123")}}
	run(j)
	if j.Response.Outcome() != Complete || j.Response.Status() != 200 || !strings.Contains(string(j.Response.Body()), "OSError") {
		t.Errorf("caught: outcome %d status %d body %q", j.Response.Outcome(), j.Response.Status(), j.Response.Body())
	}
}

// A read that must wait for the client blocks with the GIL released: the
// other handler thread serves a request meanwhile.
func TestInputBlockingReadReleasesGIL(t *testing.T) {
	app := loadApp(t, "input_app:app")
	slow := newJob(t, app, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n")
	gate := &gated{pieces: make(chan []byte), asked: make(chan struct{}, 1)}
	slow.Body = gate
	done := waiting.add(slow)
	queue.Push(slow)
	<-gate.asked // the app is now inside read(), waiting for the client
	fast := get(t, "body_app:app", "/list")
	if string(fast.Response.Body()) != "hello world" {
		t.Fatalf("request during a blocked read: %q", fast.Response.Body())
	}
	gate.pieces <- []byte("abc")
	gate.pieces <- []byte("def")
	close(gate.pieces)
	<-done
	if got, want := string(slow.Response.Body()), "b'abcdef'\nb''\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

type gated struct {
	pieces chan []byte
	asked  chan struct{}
	rest   []byte
}

func (g *gated) Read(p []byte) (int, error) {
	select {
	case g.asked <- struct{}{}:
	default:
	}
	if len(g.rest) == 0 {
		b, ok := <-g.pieces
		if !ok {
			return 0, errEOF
		}
		g.rest = b
	}
	n := copy(p, g.rest)
	g.rest = g.rest[n:]
	return n, nil
}

// A wsgi.input kept past its request refuses to read the next one's body.
func TestInputStaleAfterRequest(t *testing.T) {
	app := loadApp(t, "input_app:app")
	post(t, app, "/keep", false, "first")
	j := post(t, app, "/stale", false, "second body")
	if got, want := string(j.Response.Body()), "b'wsgi.input used after its request ended'\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A huge size from the app or a huge declared length is a bound, not an
// allocation: read(2**40) of a short body works.
func TestInputHugeReadSize(t *testing.T) {
	app := loadApp(t, "input_app:app")
	for _, path := range []string{"/readhuge", "/read"} {
		j := newJob(t, app, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n")
		j.Body = &pieces{list: [][]byte{[]byte("tiny")}}
		run(j)
		// The client ends the body early: the app sees an OSError after
		// the bytes that came.
		if j.Response.Outcome() != Aborted || j.Response.AppError() {
			t.Errorf("%s: outcome %d app error %v", path, j.Response.Outcome(), j.Response.AppError())
		}
	}
	j := newJob(t, app, "POST /readhuge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("tiny")}}
	run(j)
	if got, want := string(j.Response.Body()), "b'tiny'\nb''\n"; got != want {
		t.Errorf("chunked: got %q, want %q", got, want)
	}
}

type panicking struct{}

func (panicking) Read([]byte) (int, error) { panic("reader bug") }

// A panic in a BodyReader does not unwind through C and Python: the call
// fails there, and the panic comes back on the Go side of the cgo call.
func TestReaderPanicSurfacesAfterTheCall(t *testing.T) {
	j := newJob(t, loadApp(t, "input_app:app"), "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n")
	j.Body = panicking{}
	var got any
	err := onThread(func(th *thread) {
		defer func() { got = recover() }()
		th.serve(j, partFull)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != "reader bug" || j.Response.Outcome() != Aborted {
		t.Errorf("recovered %v, outcome %d", got, j.Response.Outcome())
	}
}

// trailerPieces is pieces with request trailers, as loop.Job holds them
// (TrailerSource): given only once Read has returned io.EOF.
type trailerPieces struct {
	pieces
	trailers [][2]string
	ended    bool
}

func (p *trailerPieces) Read(b []byte) (int, error) {
	n, err := p.pieces.Read(b)
	p.ended = p.ended || errors.Is(err, io.EOF)
	return n, err
}

func (p *trailerPieces) RequestTrailers(f func(name, value string)) {
	if p.ended {
		for _, t := range p.trailers {
			f(t[0], t[1])
		}
	}
}

// An HTTP/2 request's trailers reach the app as environ's
// m0serve.trailers once wsgi.input is read to its end, for a body of
// known length (whose end is read past its last byte) and an unframed
// one; a long trailer section too (the thread's scratch grows). An
// HTTP/1.1 request has no such key.
func TestInputTrailers(t *testing.T) {
	app := loadApp(t, "input_app:app")
	long := strings.Repeat("v", 20000)
	trailers := [][2]string{{"x-checksum", "900150983cd24fb0"}, {"x-long", long}, {"x-empty", ""}}
	want := "b'[]'\nb\"[('x-checksum', '900150983cd24fb0'), ('x-long', '" + long + "'), ('x-empty', '')]\"\n"
	for _, path := range []string{"/trailers", "/trailers-read3"} {
		for _, chunked := range []bool{false, true} {
			framing := "Content-Length: 5"
			if chunked {
				framing = "Transfer-Encoding: chunked"
			}
			j := newJob(t, app, "POST "+path+" HTTP/1.1\r\nHost: x\r\n"+framing+"\r\n\r\n")
			j.Request.Version = http1.Version20
			j.Body = &trailerPieces{pieces: pieces{list: [][]byte{[]byte("ab"), []byte("cde")}}, trailers: trailers}
			run(j)
			if got := string(j.Response.Body()); got != want {
				t.Errorf("%s chunked %v: got\n%.300s\nwant\n%.300s", path, chunked, got, want)
			}
		}
	}
	j := newJob(t, app, "POST /trailers HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
	j.Body = &trailerPieces{pieces: pieces{list: [][]byte{[]byte("abcde")}}, trailers: trailers}
	run(j)
	if got := string(j.Response.Body()); got != "b\"'absent'\"\nb\"'absent'\"\n" {
		t.Errorf("HTTP/1.1: got %q", got)
	}
}
