package http1

// Version is an HTTP/1.x protocol version, or Version20 for a request
// that came as an HTTP/2 stream.
type Version uint8

const (
	Version10 Version = 10 // HTTP/1.0
	Version11 Version = 11 // HTTP/1.1
	// Version20: HTTP/2. The parser never sets it: the loop builds an
	// HTTP/2 stream's request from the stream's fields with an
	// Assembler, which marks it so (loop/http2.go).
	Version20 Version = 20
)

// String returns the version as it appears on the wire (HTTP/2 as
// access logs write it).
func (v Version) String() string {
	switch v {
	case Version10:
		return "HTTP/1.0"
	case Version20:
		return "HTTP/2.0"
	}
	return "HTTP/1.1"
}

// TargetForm is the form of a request-target, RFC 9112 §3.2.
type TargetForm uint8

const (
	FormOrigin    TargetForm = iota // /path?query
	FormAbsolute                    // http://host/path?query
	FormAuthority                   // host:port, CONNECT only
	FormAsterisk                    // *, OPTIONS only
)

// Request is one parsed request head. Every Span is relative to the start
// of the buffer the head was parsed from; the Request holds no copy.
type Request struct {
	Method Span
	Target Span // the request-target as sent
	Path   Span // the path part of Target, still percent-encoded; "*" for asterisk form, empty for authority form
	Query  Span // after '?', without it; empty if there is none
	Form   TargetForm
	// Authority is the target's host [":" port] in absolute and authority
	// forms; empty otherwise.
	Authority Span

	Version Version
	Header  Header

	// ContentLength is the body length from Content-Length, or -1 when the
	// request has none (then the body is chunked or empty).
	ContentLength int64
	// Chunked: the body uses the chunked transfer coding.
	Chunked bool
	// KeepAlive: the connection may carry another request after this one
	// (HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with
	// "Connection: keep-alive").
	KeepAlive bool
	// Expect100: the client sent "Expect: 100-continue" and waits for a
	// 100 (Continue) before it sends the body.
	Expect100 bool
	// Upgrade: the client asks to switch protocols (an Upgrade field and
	// the "upgrade" connection option, RFC 9110 §7.8).
	Upgrade bool

	// HeadLength is how many bytes of the buffer the head used, including
	// the empty line that ends it: the next request (pipelining) or the
	// body starts there.
	HeadLength int
}

// MethodIs reports whether the method equals m (methods are case-sensitive,
// RFC 9110 §9.1).
func (r *Request) MethodIs(m string) bool {
	return string(r.Method.In(r.Header.buf)) == m
}

// HasBody reports whether a body follows the head.
func (r *Request) HasBody() bool { return r.Chunked || r.ContentLength > 0 }

// Bytes returns the bytes of a span of this request's head.
func (r *Request) Bytes(s Span) []byte { return s.In(r.Header.buf) }

// Rebase points the request at a copy of its head bytes, for a request
// handed to another thread after the receive buffer moves on.
func (r *Request) Rebase(buf []byte) { r.Header.Rebase(buf) }

// Error is a rejected request: the status to answer with and a short
// reason. A rejection always means the connection must close after the
// answer, because the framing of what follows cannot be trusted.
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string { return e.Reason }

// Limits bound what a request head may hold.
type Limits struct {
	// MaxHeadBytes bounds the request line and field section together,
	// line ends included (431 when exceeded; 414 when the request line
	// alone is over it).
	MaxHeadBytes int
	// MaxFields bounds the number of header field lines (431).
	MaxFields int
}

// DefaultLimits are 8 KiB of head and 100 fields.
var DefaultLimits = Limits{MaxHeadBytes: 8 << 10, MaxFields: 100}
