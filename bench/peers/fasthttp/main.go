// Command fasthttp is the fasthttp peer of the whole-server benchmark: a
// hello handler on one P, answering what m0serve's --native hello answers.
package main

import (
	"flag"
	"log"
	"runtime"

	"github.com/valyala/fasthttp"
)

var body = []byte("Hello, World!")

func hello(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/plain")
	ctx.SetBody(body)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	flag.Parse()
	// One P, the same as the net/http peer; taskset to one CPU gives the
	// same default, this keeps it when run unpinned.
	runtime.GOMAXPROCS(1)
	server := &fasthttp.Server{
		Handler: hello,
		// fasthttp writes "Server: <Name>" then Date, Content-Type and
		// Content-Length: the same order and bytes as m0serve's hello.
		Name: "m0serve",
	}
	log.Printf("fasthttp: listening on %s", *addr)
	if err := server.ListenAndServe(*addr); err != nil {
		log.Fatalf("fasthttp: serve %s: %v", *addr, err)
	}
}
