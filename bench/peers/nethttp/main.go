// Command nethttp is the net/http peer of the whole-server benchmark: a
// hello handler on one P, answering what m0serve's --native hello answers.
package main

import (
	"flag"
	"log"
	"net/http"
	"runtime"
)

var body = []byte("Hello, World!")

// Header values are shared slices built once, so the handler's only
// per-request header work is net/http's own (it writes Date itself and
// orders the header names alphabetically; see bench/README.md).
var (
	serverValue        = []string{"m0serve"}
	contentTypeValue   = []string{"text/plain"}
	contentLengthValue = []string{"13"}
)

func hello(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h["Server"] = serverValue
	h["Content-Type"] = contentTypeValue
	h["Content-Length"] = contentLengthValue
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(body); err != nil {
		return // the client went away; nothing to report per request
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	// One P, as the server under test gets one pinned core.
	runtime.GOMAXPROCS(1)
	server := &http.Server{Addr: *addr, Handler: http.HandlerFunc(hello)}
	log.Printf("nethttp: listening on %s", *addr)
	if err := server.ListenAndServe(); err != nil {
		log.Fatalf("nethttp: serve %s: %v", *addr, err)
	}
}
