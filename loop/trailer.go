package loop

import (
	"errors"

	"github.com/m0serve/m0serve/http1"
)

// ErrTrailerRefused reports a field RFC 9110 §6.5.1 keeps out of a trailer
// section (framing, routing, request modifiers, authentication, response
// control data, content processing). Sending it as a trailer is the
// caller's error: a recipient may have acted on the head already, and a
// framing field after the body is a smuggling vector.
var ErrTrailerRefused = errors.New("loop: field not allowed as a trailer (RFC 9110 §6.5.1)")

// trailerKeepLimit bounds the trailer buffer a released job keeps: one
// response with a huge trailer section must not pin that much per pooled
// job.
const trailerKeepLimit = 16 << 10

// refusedTrailers are the lower-case names SetTrailer refuses: RFC 9110
// §6.5.1's categories, the fields §7.6.1 makes connection-specific (never
// forwarded, so never a trailer), and Date, which the loop owns.
var refusedTrailers = [...]string{
	// Message framing (RFC 9112 §6) and connection control (RFC 9110 §7.6.1).
	"content-length", "transfer-encoding", "trailer", "te", "connection",
	"keep-alive", "proxy-connection", "upgrade",
	// Routing.
	"host",
	// Request modifiers: controls and conditionals (RFC 9110 §7.8, §13.1).
	"cache-control", "expect", "max-forwards", "pragma", "range",
	"if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "if-range",
	// Authentication (RFC 9110 §11.6, RFC 6265).
	"authorization", "proxy-authorization", "www-authenticate", "proxy-authenticate",
	"set-cookie", "cookie",
	// Response control data (RFC 9110 §15: Age, Expires, Date, Location,
	// Retry-After, Vary; Warning from RFC 7234).
	"age", "expires", "date", "location", "retry-after", "vary", "warning",
	// How to process the content.
	"content-encoding", "content-type", "content-range",
}

// trailerRefused reports whether name, in any case, is one of
// refusedTrailers. The length check first keeps the scan to a few
// compares.
func trailerRefused[T string | []byte](name T) bool {
	for _, refused := range refusedTrailers {
		if http1.EqualFold(name, refused) {
			return true
		}
	}
	return false
}

// SetTrailer adds a trailer field, sent after a chunked body's last chunk
// (RFC 9112 §7.1.2). Call it any time before Finish. The field is checked
// as SetHeader checks one (the http1 error says what was wrong); a name
// RFC 9110 §6.5.1 keeps out of trailers (Content-Length,
// Transfer-Encoding, Host, Authorization, Content-Type, Trailer, …) is
// ErrTrailerRefused, the caller's error. Either way nothing is added.
// After the connection is gone it returns ErrAborted.
//
// Only a chunked response carries trailers: one with a known length, a
// close-delimited one (HTTP/1.0 client), an answer to HEAD or a bodyless
// status (204, 304) ends without them, silently, as RFC 9110 §6.5 lets
// trailer fields be discarded. An aborted response sends none either.
// Announcing the names in a Trailer header field (RFC 9110 §6.6.2) is the
// caller's choice.
func (j *Job) SetTrailer(name, value string) error {
	if trailerRefused(name) {
		return ErrTrailerRefused
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.aborted {
		return ErrAborted
	}
	trailers, spans, err := http1.AppendFieldSpanString(j.trailers, j.trailerSpans, name, value)
	if err != nil {
		return err
	}
	j.trailers, j.trailerSpans = trailers, spans
	return nil
}

// SetTrailerBytes is SetTrailer for byte slices: a bridge copying fields
// out of its own buffers needs no string per field.
func (j *Job) SetTrailerBytes(name, value []byte) error {
	if trailerRefused(name) {
		return ErrTrailerRefused
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.aborted {
		return ErrAborted
	}
	trailers, spans, err := http1.AppendFieldSpan(j.trailers, j.trailerSpans, name, value)
	if err != nil {
		return err
	}
	j.trailers, j.trailerSpans = trailers, spans
	return nil
}

// appendLastChunk ends a chunked body: the last chunk, the trailer
// section SetTrailer validated and encoded, and the empty line (RFC 9112
// §7.1). Called with j.mu held.
func (j *Job) appendLastChunk(dst []byte) []byte {
	// AppendLastChunk with no fields writes "0\r\n\r\n"; the section goes
	// before that final CRLF. Its fields were checked as they were set, so
	// they are not passed through AppendLastChunk's check a second time.
	dst, _ = http1.AppendLastChunk(dst)
	if len(j.trailers) == 0 {
		return dst
	}
	dst = append(dst[:len(dst)-2], j.trailers...)
	return append(dst, '\r', '\n')
}
