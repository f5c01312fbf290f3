package server

import "github.com/m0serve/m0serve/http1"

// The access log's %(trace_id)s and its JSON key trace_id: the trace id
// of the request's W3C traceparent field (Trace Context, section 3.2),
// so that the log joins the traces of an instrumented app or proxy
// without a tracing SDK in the server. A field that does not parse is no
// trace id: the specification has a receiver ignore it.

// traceIDAtom is %(trace_id)s's atom byte: gunicorn has no letter for it.
const traceIDAtom = 'x'

// traceID is the trace id of req's traceparent field (a slice of it), or
// nil when it has none that parses.
func traceID(req *http1.Request) []byte {
	if req == nil {
		return nil
	}
	v := req.Header.Get("traceparent")
	// version "-" trace-id "-" parent-id "-" flags: 2+1+32+1+16+1+2
	// characters; a later version may append "-" and more (3.2.4).
	if len(v) < 55 || len(v) > 55 && (v[55] != '-' || string(v[:2]) == "00") ||
		v[2] != '-' || v[35] != '-' || v[52] != '-' ||
		!lowerHex(v[:2]) || string(v[:2]) == "ff" || !lowerHex(v[53:55]) {
		return nil
	}
	id, parent := v[3:35], v[36:52]
	if !lowerHex(id) || !lowerHex(parent) || allZero(id) || allZero(parent) {
		return nil
	}
	return id
}

func lowerHex(p []byte) bool {
	for _, c := range p {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(p []byte) bool {
	for _, c := range p {
		if c != '0' {
			return false
		}
	}
	return true
}
