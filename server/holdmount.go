package server

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"github.com/m0serve/m0serve/grant"
	"github.com/m0serve/m0serve/loop"
)

// HoldSpec is the SPEC of a --mount PREFIX=hold: PREFIX/stream?g=GRANT
// holds a stream on the grant's channel without running the app, as the
// Mojo m0serve's hold mount does; the app decided when it issued the
// grant (m0serve.grant).
const HoldSpec = "hold"

// holdGate is a hold mount: the loop thread verifies each grant
// (grant.Verifier allocates nothing) and answers a refusal itself (401
// with the seed's JSON); an accepted stream goes to a goroutine of the
// gate's, which holds it (Job.Hold needs a job) and sends ": open".
type holdGate struct {
	prefix   []byte // without a trailing slash
	verifier *grant.Verifier
	cookie   string
	buf      []byte // the decoded grant (loop thread)
	queue    *loop.JobQueue

	// The access log of the streams held (set before the loop starts):
	// nil format, none.
	logFormat *accessFormat
	proxy     *proxyTrust
}

// validateHoldMount checks a hold mount's needs: --realtime, and the key
// (M0_GRANT_KEY) it verifies with.
func (c *Config) validateHoldMount(m Mount) error {
	if !c.Realtime {
		return &ConfigError{Flag: "mount", Reason: m.Prefix + "=hold needs --realtime: the streams it opens are realtime holds"}
	}
	if os.Getenv(grant.KeyEnv) == "" {
		return &ConfigError{Flag: "mount", Reason: m.Prefix + "=hold: " + grant.ErrNoKey.Error()}
	}
	return nil
}

// newHoldGate starts a hold mount at prefix ("" for the root).
func newHoldGate(prefix string) (*holdGate, error) {
	v, err := grant.NewVerifier(os.Getenv(grant.KeyEnv), os.Getenv(grant.PreviousKeyEnv))
	if err != nil {
		return nil, err
	}
	g := &holdGate{prefix: []byte(prefix), verifier: v, cookie: grant.DefaultCookie,
		buf: make([]byte, 0, grant.MaxLen+1), queue: loop.NewJobQueue(jobQueueSize)}
	if name := os.Getenv(grant.CookieEnv); name != "" {
		g.cookie = name
	}
	go func() {
		lg := &staticLog{}
		for j := g.queue.Take(); j != nil; j = g.queue.Take() {
			g.open(j, lg)
		}
	}()
	return g, nil
}

var (
	grantRefusedType = "application/json"
	holdAllow        = "GET, HEAD, OPTIONS"
	holdOpen         = []byte(": open\n\n")
)

// serve answers a request under the mount (loop thread): PREFIX/stream
// (or /stream/) with a grant that verifies is held; every other path is
// 404, every other method 405.
func (g *holdGate) serve(req *loop.Request, w *loop.ResponseWriter) {
	rest := req.Bytes(req.Path)[len(g.prefix):]
	if string(rest) != "/stream" && string(rest) != "/stream/" {
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.Respond(404, notFound)
		return
	}
	switch {
	case req.MethodIs("GET"), req.MethodIs("HEAD"):
	case req.MethodIs("OPTIONS"):
		w.AddHeader("Allow", holdAllow)
		w.Respond(204, nil)
		return
	default:
		w.AddHeader("Allow", holdAllow)
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.Respond(405, methodNotAllowed)
		return
	}
	token, _ := grant.FromQuery(g.buf, req.Bytes(req.Query))
	g.buf = token[:0]
	var session []byte
	var hasSession bool
	for i := 0; i < req.Header.Len() && !hasSession; i++ {
		if name, value := req.Header.Field(i); len(name) == len("cookie") && bytes.EqualFold(name, []byte("cookie")) {
			session, hasSession = grant.CookieValue(value, g.cookie)
		}
	}
	if _, refusal := g.verifier.Verify(token, time.Now().Unix(), session, hasSession); refusal != grant.OK {
		w.AddHeader("Content-Type", grantRefusedType)
		w.Respond(401, refusal.Body())
		return
	}
	if req.MethodIs("HEAD") {
		w.AddHeader("Content-Type", "text/event-stream")
		w.AddHeader("Cache-Control", "no-cache")
		w.RespondHead(200, -1)
		return
	}
	w.DeferTo(g.queue)
}

// open holds an accepted stream (the gate's goroutine): its channel is
// the grant's, verified on the loop thread. Over HTTP/2, which holds
// nothing, the client gets ": open" and the end, as an app's hold.
func (g *holdGate) open(j *loop.Job, lg *staticLog) {
	buf := make([]byte, 0, grant.MaxLen+1)
	token, _ := grant.FromQuery(buf, j.Request.Bytes(j.Request.Query))
	channel := string(grant.Channel(token))
	last, _ := strconv.ParseInt(string(bytes.TrimSpace(j.Request.Header.Get("last-event-id"))), 10, 64)
	held := j.Hold(channel, last) == nil
	j.SetHeader("Content-Type", "text/event-stream")
	j.SetHeader("Cache-Control", "no-cache")
	length := int64(len(holdOpen))
	if held {
		length = -1
	}
	if err := j.WriteHeader(200, length); err != nil {
		j.Abort()
		return
	}
	lg.log(g.logFormat, g.proxy, j, 200, int64(len(holdOpen)))
	j.Write(holdOpen)
	j.Finish()
}

func (g *holdGate) close() { g.queue.Close() }

var methodNotAllowed = []byte("method not allowed: a hold mount's stream is GET\n")
