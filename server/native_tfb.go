package server

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/m0serve/m0serve/loop"
)

// tfb is the native variant of the TechEmpower entry (tfb/): /plaintext
// and /json as their rules define them, inline on the loop thread.
func init() {
	natives["tfb"] = native{inline: loop.HandlerFunc(serveTFB)}
}

// tfbMessage is the json test's object. The rules want it made and
// serialised for every request, not cached.
type tfbMessage struct {
	Message string `json:"message"`
}

// tfbEncoder is an encoding/json encoder with the buffer it writes to,
// reused across requests (the serialisation itself is not).
type tfbEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var tfbEncoders = sync.Pool{New: func() any {
	e := &tfbEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

// marshalTFB serialises one message; a variable so a test can count the
// calls.
var marshalTFB = func(e *tfbEncoder, m *tfbMessage) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")), nil
}

var notFoundBody = []byte("Not Found")

func serveTFB(r *loop.Request, w *loop.ResponseWriter) {
	switch string(r.Bytes(r.Path)) {
	case "/plaintext":
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(200, helloBody)
	case "/json":
		e := tfbEncoders.Get().(*tfbEncoder)
		body, err := marshalTFB(e, &tfbMessage{Message: "Hello, World!"})
		if err != nil {
			tfbEncoders.Put(e)
			w.Respond(500, nil)
			return
		}
		w.AddHeader("Content-Type", "application/json")
		w.Respond(200, body) // copied into the send buffer
		tfbEncoders.Put(e)
	default:
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(404, notFoundBody)
	}
}
