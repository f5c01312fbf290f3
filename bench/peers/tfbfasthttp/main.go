// Command tfbfasthttp is the fasthttp peer of make bench-tfb: TechEmpower's
// /plaintext and /json on one P, the json object made and encoded with
// encoding/json for every request, as their rules want.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"runtime"

	"github.com/valyala/fasthttp"
)

var plaintext = []byte("Hello, World!")

type message struct {
	Message string `json:"message"`
}

func handle(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/plaintext":
		ctx.SetContentType("text/plain")
		ctx.SetBody(plaintext)
	case "/json":
		ctx.SetContentType("application/json")
		body, err := json.Marshal(&message{Message: "Hello, World!"})
		if err != nil {
			ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		ctx.SetBody(body)
	default:
		ctx.Error("Not Found", fasthttp.StatusNotFound)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	flag.Parse()
	runtime.GOMAXPROCS(1) // one core, as every arm of the run
	server := &fasthttp.Server{Handler: handle, Name: "fasthttp"}
	log.Printf("tfbfasthttp: listening on %s", *addr)
	if err := server.ListenAndServe(*addr); err != nil {
		log.Fatalf("tfbfasthttp: serve %s: %v", *addr, err)
	}
}
