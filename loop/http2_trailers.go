package loop

// A request's trailers (RFC 9113 §8.1: a HEADERS block after the body's
// DATA that ends the stream), for a Go handler once it has read the body
// to its end, and for the bridge, which gives them to a WSGI app
// (m0serve.trailers; ASGI's http.request has no place for them). HTTP/2
// only: over HTTP/1.1 a chunked body's trailer section is checked and
// dropped.

// RequestTrailers calls f with each trailer field of the request, names
// in lower case, in the order received, once Read has returned io.EOF
// (before, it calls f with none). f must not keep the strings past the
// job's Finish.
func (j *Job) RequestTrailers(f func(name, value string)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.bodyDone || j.inboxRead < len(j.inbox) {
		return
	}
	for _, t := range j.h2Trailers {
		f(t.Name, t.Value)
	}
}
