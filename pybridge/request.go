package pybridge

import "github.com/m0serve/m0serve/http1"

// BodyReader delivers the request body. Read may block until bytes arrive
// (the handler thread waits with the GIL released); it returns io.EOF at
// the end of the body and never reads past it. p is C memory valid only
// during the call: the reader must not keep it.
type BodyReader interface {
	Read(p []byte) (int, error)
}

// Request is the request as the bridge reads it: spans into Head, as
// http1 parsed them, plus what the connection knows.
type Request struct {
	// Head is the buffer every span indexes. It must stay unchanged until
	// the job completes.
	Head []byte

	Method, Target, Path, Query http1.Span
	Version                     http1.Version
	// Fields are the header fields in arrival order.
	Fields []http1.Field

	// ContentLength is the body length, -1 when there is none given
	// (chunked or empty).
	ContentLength int64
	Chunked       bool

	RemoteAddr []byte // the client's address as text, without port
	RemotePort int
	// Scheme overrides the app's URL scheme for this request (a trusted
	// proxy's X-Forwarded-Proto or Forwarded proto=).
	Scheme Scheme

	// TLS is the connection's TLS facts (tlsrec.Conn.Facts), nil for
	// plain HTTP: environ's HTTPS and SSL_* entries, the ASGI scope's TLS
	// extension.
	TLS []byte
	// withTLS is Head and TLS end to end, the buffer C reads both from.
	withTLS []byte

	// WebSocket: the request is a checked WebSocket opening handshake; an
	// ASGI executor serves it as the websocket scope, and the job's
	// Writer is a Port.
	WebSocket bool
}

// Scheme is a request's URL scheme, wsgi.url_scheme or the ASGI scope's
// scheme.
type Scheme uint8

const (
	SchemeDefault Scheme = iota // the app's (AppSpec.URLScheme)
	SchemeHTTP
	SchemeHTTPS
)

// cHead is the buffer passed to C: Head, followed by the TLS facts when
// there are any (fillRequest's span says where).
func (r *Request) cHead() []byte {
	if len(r.TLS) == 0 {
		return r.Head
	}
	r.withTLS = append(append(r.withTLS[:0], r.Head...), r.TLS...)
	return r.withTLS
}

// FromHTTP1 fills the request from a parsed head; head is the buffer its
// spans index (a copy the job owns: the receive buffer moves on). The
// fields are copied into r's own storage, reused across requests.
func (r *Request) FromHTTP1(req *http1.Request, head []byte) {
	r.Head = head
	r.Method, r.Target, r.Path, r.Query = req.Method, req.Target, req.Path, req.Query
	r.Version = req.Version
	r.Fields = append(r.Fields[:0], req.Header.Fields()...)
	r.ContentLength = req.ContentLength
	r.Chunked = req.Chunked
}
