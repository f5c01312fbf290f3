package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/m0serve/m0serve/loop"
)

// arena is the native entry of HttpArena (arena/m0serve-native): its
// endpoints as the harness's validate.sh checks them. A request without
// a body is answered inline on the loop thread; one with a body (POST
// /baseline11, /upload) is read on a handler goroutine.
func init() {
	natives["arena"] = native{inline: loop.HandlerFunc(serveArena), deferred: serveArenaBody, setup: loadArenaDataset}
}

// arenaItem is one item of the harness's dataset.json, and of a /json
// answer with its total.
type arenaItem struct {
	ID       int         `json:"id"`
	Name     string      `json:"name"`
	Category string      `json:"category"`
	Price    int         `json:"price"`
	Quantity int         `json:"quantity"`
	Active   bool        `json:"active"`
	Tags     []string    `json:"tags"`
	Rating   arenaRating `json:"rating"`
	Total    int         `json:"total"`
}

type arenaRating struct {
	Score int `json:"score"`
	Count int `json:"count"`
}

type arenaItems struct {
	Items []arenaItem `json:"items"`
	Count int         `json:"count"`
}

// arenaDataset is read once, before the loop starts (DATASET_PATH, as the
// entry's Python apps read it; the harness mounts /data/dataset.json).
var arenaDataset []arenaItem

func loadArenaDataset(logf func(string, ...any)) {
	path := os.Getenv("DATASET_PATH")
	if path == "" {
		path = "/data/dataset.json"
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &arenaDataset)
	}
	if err != nil {
		arenaDataset = nil
		logf("m0serve: warning: --native arena: no dataset, /json answers no items: %v", err)
	}
}

// arenaEncoder holds what one /json answer is built in, reused across
// requests (the items and their serialisation are made for each).
type arenaEncoder struct {
	items  arenaItems
	buf    bytes.Buffer
	enc    *json.Encoder
	zipped bytes.Buffer
	zip    *gzip.Writer
}

var arenaEncoders = sync.Pool{New: func() any {
	e := &arenaEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.zip, _ = gzip.NewWriterLevel(&e.zipped, gzip.BestSpeed)
	return e
}}

// encode serialises the first count items with their totals, gzipped when
// zip is set.
func (e *arenaEncoder) encode(count, multiplier int, zip bool) ([]byte, error) {
	count = max(min(count, len(arenaDataset)), 0)
	e.items.Items = append(e.items.Items[:0], arenaDataset[:count]...)
	for i := range e.items.Items {
		item := &e.items.Items[i]
		item.Total = item.Price * item.Quantity * multiplier
	}
	e.items.Count = count
	e.buf.Reset()
	if err := e.enc.Encode(&e.items); err != nil {
		return nil, err
	}
	body := bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))
	if !zip {
		return body, nil
	}
	e.zipped.Reset()
	e.zip.Reset(&e.zipped)
	if _, err := e.zip.Write(body); err != nil {
		return nil, err
	}
	if err := e.zip.Close(); err != nil {
		return nil, err
	}
	return e.zipped.Bytes(), nil
}

var (
	okBody       = []byte("ok")
	zeroBody     = []byte("0")
	notFoundBody = []byte("not found")
	badBody      = []byte("bad request")
)

func serveArena(r *loop.Request, w *loop.ResponseWriter) {
	path := r.Bytes(r.Path)
	get := r.MethodIs("GET") || r.MethodIs("HEAD")
	if !get && !r.MethodIs("POST") {
		w.AddHeader("Allow", "GET, HEAD, POST")
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(405, nil)
		return
	}
	if r.HasBody() {
		w.Defer()
		return
	}
	switch {
	case string(path) == "/baseline11" || string(path) == "/baseline2":
		var digits [20]byte
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(200, strconv.AppendInt(digits[:0], int64(querySum(r.Bytes(r.Query))), 10))
	case string(path) == "/pipeline":
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(200, okBody)
	case bytes.HasPrefix(path, []byte("/json/")):
		serveArenaJSON(r, w, path[len("/json/"):])
	case string(path) == "/ws" && r.IsWebSocket():
		// A refused handshake is answered by AcceptWebSocket itself.
		w.AcceptWebSocket(webSocketEcho{}, nil)
	case string(path) == "/upload" && !get:
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(200, zeroBody) // no body: none counted
	default:
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(404, notFoundBody)
	}
}

func serveArenaJSON(r *loop.Request, w *loop.ResponseWriter, tail []byte) {
	count, ok := parseInt(tail)
	multiplier, mok := queryValue(r.Bytes(r.Query), "m")
	if !ok || !mok {
		w.AddHeader("Content-Type", "text/plain")
		w.Respond(400, badBody)
		return
	}
	zip := bytes.Contains(r.Header.Get("Accept-Encoding"), []byte("gzip"))
	e := arenaEncoders.Get().(*arenaEncoder)
	defer arenaEncoders.Put(e)
	body, err := e.encode(count, multiplier, zip)
	if err != nil {
		w.Respond(500, nil)
		return
	}
	w.AddHeader("Content-Type", "application/json")
	if zip {
		w.AddHeader("Content-Encoding", "gzip")
	}
	w.Respond(200, body) // copied into the send buffer or the stream's frames
}

// arenaReads are the buffers bodies are read into.
var arenaReads = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// serveArenaBody answers the requests with a body: /baseline11 and
// /baseline2 add it (an integer) to the query's sum, /upload counts its
// bytes.
func serveArenaBody(j *loop.Job) {
	req := &j.Request
	path := string(req.Bytes(req.Path))
	buf := arenaReads.Get().(*[64 << 10]byte)
	defer arenaReads.Put(buf)
	var size, answer int
	for {
		n, err := j.Read(buf[size:])
		if path != "/upload" {
			size += n // the integer is kept, up to the buffer's size
		} else {
			answer += n
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			finishWithError(j, err)
			return
		}
		if size == len(buf) {
			finishArena(j, 413, []byte("body too large"))
			return
		}
	}
	switch path {
	case "/upload":
	case "/baseline11", "/baseline2":
		n, ok := parseInt(bytes.TrimSpace(buf[:size]))
		if !ok {
			finishArena(j, 400, badBody)
			return
		}
		answer = querySum(req.Bytes(req.Query)) + n
	default:
		finishArena(j, 404, notFoundBody)
		return
	}
	finishArena(j, 200, strconv.AppendInt(buf[:0], int64(answer), 10))
}

func finishArena(j *loop.Job, status int, body []byte) {
	j.SetHeader("Content-Type", "text/plain")
	if j.WriteHeader(status, int64(len(body))) == nil {
		j.Write(body)
	}
	j.Finish()
}

// querySum adds the query's integer values (a=13&b=42: 55), skipping the
// others.
func querySum(query []byte) int {
	sum := 0
	for len(query) > 0 {
		pair := query
		if i := bytes.IndexByte(query, '&'); i >= 0 {
			pair, query = query[:i], query[i+1:]
		} else {
			query = nil
		}
		if i := bytes.IndexByte(pair, '='); i >= 0 {
			if n, ok := parseInt(pair[i+1:]); ok {
				sum += n
			}
		}
	}
	return sum
}

// queryValue is the integer value of name in the query.
func queryValue(query []byte, name string) (int, bool) {
	for len(query) > 0 {
		pair := query
		if i := bytes.IndexByte(query, '&'); i >= 0 {
			pair, query = query[:i], query[i+1:]
		} else {
			query = nil
		}
		if len(pair) > len(name) && pair[len(name)] == '=' && string(pair[:len(name)]) == name {
			return parseInt(pair[len(name)+1:])
		}
	}
	return 0, false
}

// parseInt reads a decimal integer with an optional sign, of at most 18
// digits (no overflow).
func parseInt(b []byte) (int, bool) {
	negative := len(b) > 0 && (b[0] == '-' || b[0] == '+')
	if negative {
		negative = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if negative {
		n = -n
	}
	return n, true
}
