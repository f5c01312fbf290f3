package loop

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeFileSends counts QueueSendFile calls on every fakeBackend, so a test
// can tell the file went to the backend rather than through the outbox.
var fakeFileSends atomic.Int64

// QueueSendFile implements Backend on the fake: the range is read into
// the connection's output (as the kernel would put it on the wire), the
// file closed, and the completion is Res 0, -FileEnded for a file that ends
// first, or ECONNRESET for a reset or closed connection.
func (b *fakeBackend) QueueSendFile(fd int, slot, gen uint32, file int, offset, length int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fakeFileSends.Add(1)
	c := b.conn(fd)
	res := int32(0)
	if c.reset || c.closed {
		res = -int32(syscall.ECONNRESET)
	} else {
		c.out = slices.Grow(c.out, int(length))
		for length > 0 {
			end := len(c.out)
			n, err := unix.Pread(file, c.out[end:end+int(length)], offset)
			if err != nil || n == 0 {
				res = -int32(FileEnded)
				break
			}
			c.out = c.out[:end+n]
			offset += int64(n)
			length -= int64(n)
		}
		c.sends++
	}
	unix.Close(file)
	b.ready = append(b.ready, Completion{Op: OpSend, Slot: slot, Gen: gen, Res: res})
}

// testFile is a file of distinct bytes a handler sends from.
type testFile struct {
	data []byte
	path string
}

func newTestFile(t testing.TB, size int) *testFile {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	path := filepath.Join(t.TempDir(), "body.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return &testFile{data: data, path: path}
}

// open returns a fresh descriptor and a check that it was closed later.
func (f *testFile) open(t testing.TB) (int, func() bool) {
	fd, err := unix.Open(f.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Errorf("open: %v", err)
		return -1, func() bool { return true }
	}
	var st unix.Stat_t
	unix.Fstat(fd, &st)
	return fd, func() bool {
		var now unix.Stat_t
		return unix.Fstat(fd, &now) != nil || now.Ino != st.Ino || now.Dev != st.Dev
	}
}

// parseResponse reads one response from raw output.
func parseResponse(t *testing.T, raw, method string) (*http.Response, string, string) {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(raw))
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading response: %v\n%q", err, raw)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	rest, _ := io.ReadAll(br)
	return resp, string(body), string(rest)
}

// A range from an offset, shorter than the file, goes to the backend as
// one file send after the head, byte-exact; the loop closes the file and
// the connection serves its next request.
func TestSendFileRange(t *testing.T) {
	f := newTestFile(t, 300<<10)
	const offset, length = 1000, 200<<10 + 3
	var closedChecks atomic.Pointer[func() bool]
	work := func(j *Job) {
		fd, closed := f.open(t)
		closedChecks.Store(&closed)
		j.SetHeader("Content-Type", "application/octet-stream")
		if err := j.WriteHeader(200, length); err != nil {
			t.Errorf("WriteHeader: %v", err)
		}
		if err := j.SendFile(fd, offset, length); err != nil {
			t.Errorf("SendFile: %v", err)
		}
	}
	deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
		closedChecks.Store(nil)
		c := hs.connect()
		before := fakeFileSends.Load()
		hs.fb.write(c, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
		got := hs.responses(c, 1)
		resp, body, _ := parseResponse(t, got[0], "GET")
		if resp.StatusCode != 200 || resp.ContentLength != length || body != string(f.data[offset:offset+length]) {
			t.Fatalf("got %d, length %d, body of %d bytes equal %v", resp.StatusCode, resp.ContentLength, len(body), body == string(f.data[offset:offset+length]))
		}
		if sends := fakeFileSends.Load() - before; sends != 1 {
			t.Fatalf("%d file sends, want 1", sends)
		}
		hs.until("file closed", func() bool { p := closedChecks.Load(); return p != nil && (*p)() })
		hs.fb.write(c, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
		if got := hs.responses(c, 2); !strings.HasPrefix(got[1], "HTTP/1.1 200 OK\r\n") {
			t.Fatalf("second request on the connection: %q", got[1])
		}
		if hs.fb.isClosed(c) {
			t.Fatal("connection closed after a complete file response")
		}
	})
}

// SendFile with no posted head answers 200 with the range's length; after
// Write, the outbox goes first and a chunked body frames the file as one
// chunk.
func TestSendFileHeadAndFraming(t *testing.T) {
	f := newTestFile(t, 70<<10)
	work := func(j *Job) {
		fd, _ := f.open(t)
		if string(j.Request.Bytes(j.Request.Target)) == "/chunked" {
			j.WriteHeader(200, -1)
			j.Write([]byte("prefix-"))
		}
		if err := j.SendFile(fd, 5, 66<<10); err != nil {
			t.Errorf("SendFile: %v", err)
		}
	}
	deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET /plain HTTP/1.1\r\nHost: x\r\n\r\nGET /chunked HTTP/1.1\r\nHost: x\r\n\r\n")
		got := hs.responses(c, 2)
		want := string(f.data[5 : 5+66<<10])
		resp, body, _ := parseResponse(t, got[0], "GET")
		if resp.StatusCode != 200 || resp.ContentLength != 66<<10 || body != want {
			t.Fatalf("plain: %d length %d, %d bytes equal %v", resp.StatusCode, resp.ContentLength, len(body), body == want)
		}
		resp, body, _ = parseResponse(t, got[1], "GET")
		if resp.StatusCode != 200 || len(resp.TransferEncoding) != 1 || body != "prefix-"+want {
			t.Fatalf("chunked: %d %v, %d bytes equal %v", resp.StatusCode, resp.TransferEncoding, len(body), body == "prefix-"+want)
		}
	})
}

// HEAD sends none of the file; a range longer than the declared length is
// cut to it, and the connection closes after it.
func TestSendFileHeadRequestAndExcess(t *testing.T) {
	f := newTestFile(t, 10<<10)
	var lastClosed atomic.Pointer[func() bool]
	work := func(j *Job) {
		fd, closed := f.open(t)
		lastClosed.Store(&closed)
		j.WriteHeader(200, 100)
		j.SendFile(fd, 0, 10<<10)
	}
	deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
		lastClosed.Store(nil)
		c := hs.connect()
		hs.fb.write(c, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.until("HEAD's file closed", func() bool { p := lastClosed.Load(); return p != nil && (*p)() })
		hs.passes(2)
		head := hs.fb.output(c)
		if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || !strings.Contains(head, "Content-Length: 100\r\n") || strings.Index(head, "\r\n\r\n") != len(head)-4 {
			t.Fatalf("HEAD: want the head alone, got %q", head)
		}
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.until("close after the cut range", func() bool { return hs.fb.isClosed(c) })
		out := hs.fb.output(c)[len(head):]
		resp, body, rest := parseResponse(t, out, "GET")
		if resp.ContentLength != 100 || body != string(f.data[:100]) || rest != "" {
			t.Fatalf("cut range: length %d, body %q…, %d bytes after it", resp.ContentLength, body[:min(len(body), 10)], len(rest))
		}
	})
}

// A file shorter than announced: the connection closes with the body
// short of its Content-Length, never a valid end.
func TestSendFileShorterThanAnnounced(t *testing.T) {
	f := newTestFile(t, 1000)
	work := func(j *Job) {
		fd, _ := f.open(t)
		j.WriteHeader(200, 5000)
		j.SendFile(fd, 0, 5000)
	}
	deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
		out := hs.fb.output(c)
		head, body, _ := strings.Cut(out, "\r\n\r\n")
		if !strings.Contains(head, "Content-Length: 5000") || body != string(f.data) {
			t.Fatalf("want the head and the file's 1000 bytes, then the close; got %d bytes:\n%q", len(out), head)
		}
	})
}

// The client is gone when the head is sent: the loop closes the file it
// never handed to the backend. Gone before SendFile: SendFile refuses, and
// the descriptor stays the handler's.
func TestSendFileClientGone(t *testing.T) {
	f := newTestFile(t, 1000)
	var closedCheck atomic.Pointer[func() bool]
	work := func(j *Job) {
		fd, closed := f.open(t)
		closedCheck.Store(&closed)
		// SendFile posts the head itself: the loop sees head and file in
		// one note, so the head's failed send finds the file not yet
		// handed over, and the loop must close it.
		if err := j.SendFile(fd, 0, 1000); err != nil {
			t.Errorf("SendFile: %v", err)
		}
	}
	deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
		closedCheck.Store(nil)
		c := hs.connect()
		hs.fb.resetNextSend(c)
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
		hs.until("file closed", func() bool { p := closedCheck.Load(); return p != nil && (*p)() })
	})

	refused := make(chan error, 1)
	release := make(chan struct{})
	var fdStillOpen atomic.Bool
	late := func(j *Job) {
		<-release
		fd, closed := f.open(t)
		err := j.SendFile(fd, 0, 1000)
		fdStillOpen.Store(!closed())
		if err != nil {
			unix.Close(fd)
			j.Abort()
		}
		refused <- err
	}
	deferredHarness(t, deferEverything, late, nil)(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.passes(3)
		hs.l.Shutdown(0) // closes every connection at once, this job's too
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
		release <- struct{}{}
		if err := <-refused; err != ErrAborted || !fdStillOpen.Load() {
			t.Fatalf("SendFile on a job whose client left: %v (fd left open: %v), want ErrAborted and the fd untouched", err, fdStillOpen.Load())
		}
	})
}

// fileRig serves one keep-alive connection whose every response is a
// 4 KiB file body handed over with SendFile (the descriptor is a dup,
// which allocates nothing).
type fileRig struct {
	hs    *harness
	c     *fakeConn
	q     *JobQueue
	f     *testFile
	base  int
	round func()
}

func newFileRig(tb testing.TB) *fileRig {
	f := newTestFile(tb, 4096)
	base, _ := f.open(tb)
	q := NewJobQueue(16)
	hs := newHarness(tb, deferEverything, func(c *Config) { c.Jobs = q })
	go func() {
		for j := q.Take(); j != nil; j = q.Take() {
			fd, err := unix.Dup(base)
			if err != nil {
				j.Abort()
				continue
			}
			j.WriteHeader(200, 4096)
			if j.SendFile(fd, 0, 4096) != nil {
				unix.Close(fd)
				j.Abort()
			}
		}
	}()
	c := hs.fb.dial()
	for !c.accepted {
		hs.l.pass()
	}
	r := &fileRig{hs: hs, c: c, q: q, f: f, base: base}
	last := f.data[4095]
	r.round = func() {
		fb := hs.fb
		fb.mu.Lock()
		c.in = append(c.in, browserRequest...)
		c.out = c.out[:0]
		fb.mu.Unlock()
		for {
			hs.l.pass()
			fb.mu.Lock()
			done := len(c.out) > 4096 && c.out[len(c.out)-1] == last
			fb.mu.Unlock()
			if done {
				return
			}
		}
	}
	for i := 0; i < 100; i++ {
		r.round()
	}
	return r
}

func (r *fileRig) close() {
	r.q.Close()
	unix.Close(r.base)
}

// A file response allocates nothing in steady state.
func TestSendFilePathAllocatesNothing(t *testing.T) {
	r := newFileRig(t)
	defer r.close()
	if allocs := testing.AllocsPerRun(300, r.round); allocs != 0 {
		t.Fatalf("%v allocations per file response, want 0", allocs)
	}
	if out := r.hs.fb.output(r.c); !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(out, string(r.f.data)) {
		t.Fatalf("rig is not serving the file: %s", fmt.Sprintf("%.80q", out))
	}
}

func BenchmarkSendFileRoundTrip(b *testing.B) {
	r := newFileRig(b)
	defer r.close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.round()
	}
}

// Every Job method that gives the loop news wakes a parked loop once its
// lock is released, SendFile included when it posts the head itself (a
// wake owed by the head and dropped by a plain unlock left the loop asleep
// until its next tick).
func TestJobNewsWakesAParkedLoop(t *testing.T) {
	f := newTestFile(t, 4<<10)
	calls := map[string]func(j *Job){
		"SendFile": func(j *Job) {
			fd, _ := f.open(t)
			if err := j.SendFile(fd, 0, 4<<10); err != nil {
				t.Fatalf("SendFile: %v", err)
			}
		},
		"WriteHeader": func(j *Job) { j.WriteHeader(204, 0) },
		"Write":       func(j *Job) { j.Write([]byte("x")) },
		"Finish":      func(j *Job) { j.Finish() },
		"Abort":       func(j *Job) { j.Abort() },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			q := NewJobQueue(4)
			hs := newHarness(t, deferEverything, func(c *Config) { c.Jobs = q })
			c := hs.connect()
			hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			var j *Job
			hs.until("the job queued", func() bool { j = q.TryTake(); return j != nil })
			hs.l.parked.Store(true) // as while the loop waits in the backend
			call(j)
			if hs.l.parked.Load() {
				t.Fatalf("%s left the parked loop asleep", name)
			}
		})
	}
}
