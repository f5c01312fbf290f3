package pybridge

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestResponseShapesBuffered(t *testing.T) {
	for _, c := range []struct {
		path, reason, body string
		status, headers    int
	}{
		{"/list", "OK", "hello world", 200, 2},
		{"/tuple", "Created", "ab", 201, 2},
		{"/empty", "No Content", "", 204, 0},
		{"/generator", "OK", "chunk0;chunk1;chunk2;", 200, 2},
		{"/generator-empty", "OK", "", 200, 2},
		{"/write", "OK", "written then returned", 200, 2},
		{"/file", "OK", strings.Repeat("0123456789", 1000), 200, 2},
		{"/many-headers", "OK", "x", 200, 40},
	} {
		t.Run(c.path, func(t *testing.T) {
			r := get(t, "body_app:app", c.path).Response
			if r.Outcome() != Complete || r.Status() != c.status || string(r.Reason()) != c.reason ||
				r.HeaderLen() != c.headers || string(r.Body()) != c.body || r.ContentLength() != int64(len(c.body)) {
				t.Errorf("outcome %d, %d %q, %d headers, content length %d, body %q",
					r.Outcome(), r.Status(), r.Reason(), r.HeaderLen(), r.ContentLength(), r.Body())
			}
		})
	}
}

func TestResponseHeadersInOrder(t *testing.T) {
	r := get(t, "body_app:app", "/many-headers").Response
	for i := 0; i < 40; i++ {
		n, v := r.Header(i)
		if want := "X-H" + itoa(i); string(n) != want || string(v) != "v"+itoa(i) {
			t.Fatalf("header %d = %q: %q", i, n, v)
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestResponseLatin1Head(t *testing.T) {
	r := get(t, "body_app:app", "/latin1").Response
	if v, _ := header(r, "X-Latin"); v != "caf\xe9" || string(r.Reason()) != "\xe9t\xe9" {
		t.Errorf("reason %q X-Latin %q, want latin-1 bytes", r.Reason(), v)
	}
}

// With a BodyWriter, a list still comes back whole (its length is known);
// anything else streams, one Write per non-empty block.
func TestResponseShapesStreamed(t *testing.T) {
	for _, c := range []struct {
		path    string
		outcome Outcome
		chunks  []string
		body    string
	}{
		{"/list", Complete, nil, "hello world"},
		{"/empty", Complete, nil, ""},
		{"/generator-empty", Complete, nil, ""},
		{"/generator", Streamed, []string{"chunk0;", "chunk1;", "chunk2;"}, ""},
		{"/write", Streamed, []string{"written ", "then returned"}, ""},
	} {
		t.Run(c.path, func(t *testing.T) {
			j := newJob(t, loadApp(t, "body_app:app"), "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
			w := &recorder{}
			j.Writer = w
			run(j)
			r := j.Response
			if r.Outcome() != c.outcome || strings.Join(w.chunks, "|") != strings.Join(c.chunks, "|") ||
				string(r.Body()) != c.body {
				t.Errorf("outcome %d chunks %q body %q", r.Outcome(), w.chunks, r.Body())
			}
			wantHeads := 0
			if c.outcome == Streamed {
				wantHeads = 1
				if r.ContentLength() != -1 || w.status != 200 || w.headers != 2 {
					t.Errorf("streamed: content length %d, head %d with %d headers", r.ContentLength(), w.status, w.headers)
				}
			}
			if w.heads != wantHeads {
				t.Errorf("WriteHead called %d times, want %d", w.heads, wantHeads)
			}
		})
	}
}

// A file_wrapper over a regular file comes back as the file: a descriptor,
// the offset the app had read to, the length left.
func TestFileWrapperSendsFile(t *testing.T) {
	content, err := os.ReadFile("testdata/file_body.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, skip := range []int{0, 4} {
		j := get(t, "body_app:files", "/?"+strconv.Itoa(skip))
		r := j.Response
		fd, off, n, ok := r.TakeFile()
		if !ok || r.Outcome() != Complete || r.Status() != 200 || len(r.Body()) != 0 {
			t.Fatalf("skip %d: file %v, outcome %d status %d body %q", skip, ok, r.Outcome(), r.Status(), r.Body())
		}
		f := os.NewFile(uintptr(fd), "body")
		got := make([]byte, n)
		if _, err := f.ReadAt(got, off); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if string(got) != string(content[skip:]) || r.ContentLength() != n {
			t.Errorf("skip %d: sent %q (content length %d), want %q", skip, got, r.ContentLength(), content[skip:])
		}
	}
	// Not taken: the arena closes it at the next request, not leaking it.
	j := get(t, "body_app:files", "/")
	fd, _, _, _ := j.Response.File()
	run(j)
	if _, _, _, ok := j.Response.File(); !ok {
		t.Fatal("second request: no file")
	}
	var st syscall.Stat_t
	if fd2, _, _, _ := j.Response.File(); fd2 != fd && syscall.Fstat(fd, &st) == nil {
		t.Errorf("descriptor %d of the first response still open", fd)
	}
}

// With a Writer, a list body over the buffer limit streams with its
// length known; under it, it stays whole in the arena.
func TestBigListStreamsWithLength(t *testing.T) {
	app := loadApp(t, "body_app:big")
	for _, c := range []struct {
		limit   int
		outcome Outcome
		chunks  int
	}{{0, Streamed, 3}, {200000, Complete, 0}} {
		j := newJob(t, app, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		w := &recorder{}
		j.Writer, j.BufferLimit = w, c.limit
		run(j)
		r := j.Response
		if r.Outcome() != c.outcome || len(w.chunks) != c.chunks || r.ContentLength() != 120000 || r.AppContentLength() != 120000 {
			t.Errorf("limit %d: outcome %d, %d chunks, content length %d (app %d)", c.limit, r.Outcome(), len(w.chunks), r.ContentLength(), r.AppContentLength())
		}
		if c.outcome == Streamed && (w.heads != 1 || w.chunks[1] != strings.Repeat("b", 40000)) {
			t.Errorf("limit %d: %d heads", c.limit, w.heads)
		}
	}
}

func TestAppContentLength(t *testing.T) {
	if n := get(t, "body_app:app", "/list").Response.AppContentLength(); n != -1 {
		t.Errorf("no Content-Length field: %d", n)
	}
	if n := get(t, "bench_app:app", "/").Response.AppContentLength(); n != 13 {
		t.Errorf("Content-Length 13: %d", n)
	}
}

// An arena that one large response grew is given back at the next request.
func TestArenaTrimmedAfterLargeResponse(t *testing.T) {
	j := newJob(t, loadApp(t, "body_app:huge"), "GET /list HTTP/1.1\r\nHost: x\r\n\r\n")
	run(j)
	if len(j.Response.Body()) != 2000000 || j.Response.capacity() < 2000000 {
		t.Fatalf("body %d bytes, capacity %d", len(j.Response.Body()), j.Response.capacity())
	}
	j.App = loadApp(t, "body_app:app")
	run(j)
	if c := j.Response.capacity(); c > 1<<20 || string(j.Response.Body()) != "hello world" {
		t.Errorf("after a small response: capacity %d, body %q", c, j.Response.Body())
	}
}

// blocking is a BodyWriter whose Write waits for the test, as a full
// outbox would.
type blocking struct {
	recorder
	entered chan struct{}
	proceed chan struct{}
}

func (b *blocking) Write(p []byte) (int, error) {
	b.entered <- struct{}{}
	<-b.proceed
	return b.recorder.Write(p)
}

// A Write that blocks for back-pressure holds no GIL: the other handler
// thread serves a request meanwhile.
func TestBlockedWriteReleasesGIL(t *testing.T) {
	j := newJob(t, loadApp(t, "body_app:app"), "GET /generator HTTP/1.1\r\nHost: x\r\n\r\n")
	w := &blocking{entered: make(chan struct{}), proceed: make(chan struct{})}
	j.Writer = w
	done := waiting.add(j)
	queue.Push(j)
	<-w.entered // the handler is inside Write, GIL released
	if r := get(t, "body_app:app", "/list").Response; string(r.Body()) != "hello world" {
		t.Fatalf("request during a blocked write: %q", r.Body())
	}
	close(w.proceed)
	go func() {
		for range w.entered {
		}
	}()
	<-done
	close(w.entered)
	if j.Response.Outcome() != Streamed || strings.Join(w.chunks, "") != "chunk0;chunk1;chunk2;" {
		t.Errorf("outcome %d chunks %q", j.Response.Outcome(), w.chunks)
	}
}
