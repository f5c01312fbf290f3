//go:build linux

package loop_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/m0serve/m0serve/epoll"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/uring"
	"golang.org/x/sys/unix"
)

// fileServer is a loop on a real backend whose handler goroutine answers
// every request with Job.SendFile of one file: the range a test sets per
// target.
type fileServer struct {
	addr string
	data []byte
	path string

	mu     sync.Mutex
	ranges map[string][3]int64 // target: offset, length, announced Content-Length
	opened map[string]*openFile
}

type openFile struct {
	fd       int
	dev, ino uint64
}

// closed reports whether fd no longer names the file it was opened on.
func (o *openFile) closed() bool {
	var st unix.Stat_t
	return unix.Fstat(o.fd, &st) != nil || uint64(st.Dev) != o.dev || st.Ino != o.ino
}

func startFileServer(t *testing.T, newBackend func() (loop.Backend, error), size int) *fileServer {
	t.Helper()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	path := filepath.Join(t.TempDir(), "body.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fs := &fileServer{data: data, path: path, ranges: map[string][3]int64{}, opened: map[string]*openFile{}}

	listenFD, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(listenFD, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(listenFD, 128); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(listenFD)
	fs.addr = fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)

	jobs := loop.NewJobQueue(16)
	go func() {
		for j := jobs.Take(); j != nil; j = jobs.Take() {
			fs.serve(t, j)
		}
	}()
	l, err := loop.New(loop.Config{
		NewBackend: newBackend,
		ListenFD:   listenFD,
		Handler:    loop.HandlerFunc(func(_ *loop.Request, w *loop.ResponseWriter) { w.Defer() }),
		Jobs:       jobs,
		// Past every wait of the test (waitClosed's 20 s, the clients' 60
		// s deadlines): the keep-alive connection idles between requests
		// while the test waits for the file's close, which under -race on
		// a loaded machine took longer than the default 5 s.
		KeepAliveTimeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Run() }()
	t.Cleanup(func() {
		l.Shutdown(time.Second)
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		jobs.Close()
		unix.Close(listenFD)
	})
	return fs
}

func (fs *fileServer) serve(t *testing.T, j *loop.Job) {
	target := string(j.Request.Bytes(j.Request.Target))
	fs.mu.Lock()
	r, ok := fs.ranges[target]
	fs.mu.Unlock()
	if !ok {
		j.WriteHeader(404, 0)
		j.Finish()
		return
	}
	fd, err := unix.Open(fs.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Errorf("open: %v", err)
		j.Abort()
		return
	}
	var st unix.Stat_t
	unix.Fstat(fd, &st)
	fs.mu.Lock()
	fs.opened[target] = &openFile{fd: fd, dev: uint64(st.Dev), ino: st.Ino}
	fs.mu.Unlock()
	j.SetHeader("Content-Type", "application/octet-stream")
	j.WriteHeader(200, r[2])
	if err := j.SendFile(fd, r[0], r[1]); err != nil {
		unix.Close(fd)
		j.Abort()
	}
}

func (fs *fileServer) set(target string, offset, length, announced int64) {
	fs.mu.Lock()
	fs.ranges[target] = [3]int64{offset, length, announced}
	fs.mu.Unlock()
}

// waitClosed waits until the loop has closed the file it served target
// from; a leak fails the test.
func (fs *fileServer) waitClosed(t *testing.T, target string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		fs.mu.Lock()
		o := fs.opened[target]
		fs.mu.Unlock()
		if o != nil && o.closed() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the file served for %s was never closed", target)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var realBackends = []struct {
	name string
	new  func() (loop.Backend, error)
}{
	{"uring", func() (loop.Backend, error) { return uring.New(uring.Options{}) }},
	{"epoll", func() (loop.Backend, error) { return epoll.New() }},
}

// Through the whole loop on io_uring and epoll: a 64 MiB file and a range
// from an offset arrive byte-exact on one keep-alive connection; a file
// shorter than announced ends the connection short of its Content-Length;
// a client that leaves mid-file costs the loop nothing it keeps (the file
// is closed).
func TestSendFileOnRealBackends(t *testing.T) {
	const size = 64 << 20
	for _, backend := range realBackends {
		t.Run(backend.name, func(t *testing.T) {
			fs := startFileServer(t, backend.new, size)
			fs.set("/whole", 0, size, size)
			fs.set("/range", 4097, 1<<20+1, 1<<20+1)
			fs.set("/short", size-1000, 5000, 5000)
			fs.set("/leave", 0, size, size)

			conn, err := net.Dial("tcp", fs.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			br := bufio.NewReaderSize(conn, 1<<20)
			for _, c := range []struct {
				target string
				want   []byte
			}{
				{"/whole", fs.data},
				{"/range", fs.data[4097 : 4097+1<<20+1]},
				{"/whole", fs.data},
			} {
				fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", c.target)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("%s: %v", c.target, err)
				}
				body, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(c.want)) || !bytes.Equal(body, c.want) {
					t.Fatalf("%s: %v, status %d, length %d, %d bytes equal %v", c.target, err, resp.StatusCode, resp.ContentLength, len(body), bytes.Equal(body, c.want))
				}
				fs.waitClosed(t, c.target)
			}

			fmt.Fprintf(conn, "GET /short HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("/short: %v", err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != io.ErrUnexpectedEOF || !bytes.Equal(body, fs.data[size-1000:]) {
				t.Fatalf("/short: %v after %d bytes, want the file's last 1000 bytes and an unexpected EOF", err, len(body))
			}
			fs.waitClosed(t, "/short")

			leaver, err := net.Dial("tcp", fs.addr)
			if err != nil {
				t.Fatal(err)
			}
			leaver.SetDeadline(time.Now().Add(60 * time.Second))
			fmt.Fprintf(leaver, "GET /leave HTTP/1.1\r\nHost: x\r\n\r\n")
			if _, err := io.ReadFull(leaver, make([]byte, 1<<20)); err != nil {
				t.Fatalf("/leave: %v", err)
			}
			leaver.(*net.TCPConn).SetLinger(0)
			leaver.Close()
			fs.waitClosed(t, "/leave")

			// The loop still serves after all that.
			again, err := net.Dial("tcp", fs.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			again.SetDeadline(time.Now().Add(60 * time.Second))
			fmt.Fprintf(again, "GET /range HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err = http.ReadResponse(bufio.NewReader(again), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err = io.ReadAll(resp.Body)
			if err != nil || !bytes.Equal(body, fs.data[4097:4097+1<<20+1]) {
				t.Fatalf("/range after a client left: %v, %d bytes", err, len(body))
			}
		})
	}
}
