//go:build linux

package loop_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/epoll"
	"github.com/m0serve/m0serve/loop"
)

// A loop serving both handler shapes: GET is answered inline on the loop
// thread; POST is deferred to a handler goroutine, which streams the body
// in with Read and the response out with Write.
func Example() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	file, _ := ln.(*net.TCPListener).File()
	fd := int(file.Fd())
	syscall.SetNonblock(fd, true)

	jobs := loop.NewJobQueue(64)
	go func() {
		for j := jobs.Take(); j != nil; j = jobs.Take() {
			body, err := io.ReadAll(j) // blocks while the loop receives
			if err != nil {
				j.Finish()
				continue
			}
			j.SetHeader("Content-Type", "text/plain")
			j.WriteHeader(200, int64(len(body)))
			j.Write(body)
			j.Finish()
		}
	}()

	handler := loop.HandlerFunc(func(req *loop.Request, w *loop.ResponseWriter) {
		if req.MethodIs("POST") {
			w.Defer() // a Job on jobs
			return
		}
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(200, []byte("Hello, World!")) // must not block
	})

	l, _ := loop.New(loop.Config{
		NewBackend: func() (loop.Backend, error) { return epoll.New() },
		ListenFD:   fd,
		Handler:    handler,
		Jobs:       jobs,
	})
	done := make(chan error)
	go func() { done <- l.Run() }()

	url := "http://" + ln.Addr().String() + "/"
	resp, _ := http.Get(url)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))

	resp, _ = http.Post(url, "text/plain", strings.NewReader("echo me"))
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))

	l.Shutdown(time.Second)
	<-done
	jobs.Close()
	file.Close()
	ln.Close()
	// Output:
	// Hello, World!
	// echo me
}
