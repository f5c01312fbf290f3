package http1

import (
	"strconv"
	"unsafe"
)

// ResponseHead is what the server knows about a response when it writes
// the head: enough to choose the framing fields (RFC 9112 §6).
type ResponseHead struct {
	Status int
	// Version is the request's version. The response is written as
	// HTTP/1.1 either way (RFC 9112 §2.3), but an HTTP/1.0 client cannot
	// read chunked framing, so an unknown length is close-delimited.
	Version Version
	// ContentLength is the body's length, or -1 when it is not known when
	// the head is written.
	ContentLength int64
	// Close: the connection closes after this response; written as
	// "Connection: close".
	Close bool
	// KeepAlive10: an HTTP/1.0 client asked for keep-alive and the server
	// agrees; written as "Connection: keep-alive". An HTTP/1.0 request
	// without it closes (RFC 9112 §9.3).
	KeepAlive10 bool
	// HeadRequest: the request was HEAD, so no body is sent, but the
	// framing fields still describe what a GET would carry (RFC 9110
	// §9.3.2).
	HeadRequest bool
	// Server is the Server field value, or nil for none. An invalid value
	// (see AppendField) is not written.
	Server []byte
}

// BodyMode says how the body after a head is framed.
type BodyMode uint8

const (
	BodyNone       BodyMode = iota // no body bytes follow the head
	BodyLength                     // exactly ContentLength bytes follow
	BodyChunked                    // chunks follow (AppendChunk, AppendLastChunk)
	BodyUntilClose                 // bytes follow until the server closes the connection
)

func (m BodyMode) String() string {
	switch m {
	case BodyNone:
		return "none"
	case BodyLength:
		return "length"
	case BodyChunked:
		return "chunked"
	case BodyUntilClose:
		return "until-close"
	}
	return "BodyMode(" + strconv.Itoa(int(m)) + ")"
}

// FieldLine is one field to write: a name and a value, as the
// application gave them.
type FieldLine struct {
	Name, Value []byte
}

// AppendField appends "name: value\r\n" to dst. The name must be a token
// (RFC 9110 §5.1); the value may hold no control byte but HTAB (RFC 9110
// §5.5: CR, LF and NUL above all, which would split the head or end it
// early), so an application cannot inject a field or a body. Leading and
// trailing SP and HTAB are trimmed from the value: they are not part of a
// field value and a recipient strips them anyway. On an invalid field
// nothing is appended and the error (Status 500: the application's fault)
// says which part was wrong.
func AppendField(dst, name, value []byte) ([]byte, error) {
	value = trimSpace(value)
	if !ValidFieldName(name) {
		return dst, errResponseFieldName
	}
	if !ValidFieldValue(value) {
		return dst, errResponseFieldValue
	}
	return appendFieldLine(dst, name, value), nil
}

// AppendFieldString is AppendField for strings, without copying them.
func AppendFieldString(dst []byte, name, value string) ([]byte, error) {
	return AppendField(dst, stringBytes(name), stringBytes(value))
}

// FieldSpan is where AppendFieldSpan put one field in its block: the
// name is block[NameAt:NameEnd], the value (trimmed) block[ValueAt:ValueEnd].
// An encoder of another form (HTTP/2's HPACK) takes each field from its
// span, as it was set and checked, and never reads the lines back.
type FieldSpan struct {
	NameAt, NameEnd, ValueAt, ValueEnd uint32
}

// Name is the span's name in block.
func (s FieldSpan) Name(block []byte) []byte { return block[s.NameAt:s.NameEnd] }

// Value is the span's value in block.
func (s FieldSpan) Value(block []byte) []byte { return block[s.ValueAt:s.ValueEnd] }

// AppendFieldSpan is AppendField that also appends the field's span to
// spans. On an invalid field neither is appended.
func AppendFieldSpan(dst []byte, spans []FieldSpan, name, value []byte) ([]byte, []FieldSpan, error) {
	at := len(dst)
	out, err := AppendField(dst, name, value)
	if err != nil {
		return dst, spans, err
	}
	nameEnd := at + len(name)
	return out, append(spans, FieldSpan{
		NameAt: uint32(at), NameEnd: uint32(nameEnd),
		ValueAt: uint32(nameEnd + len(": ")), ValueEnd: uint32(len(out) - len("\r\n")),
	}), nil
}

// AppendFieldSpanString is AppendFieldSpan for strings, without copying
// them.
func AppendFieldSpanString(dst []byte, spans []FieldSpan, name, value string) ([]byte, []FieldSpan, error) {
	return AppendFieldSpan(dst, spans, stringBytes(name), stringBytes(value))
}

// stringBytes views s as bytes for reading. The validators and append only
// read, so the string's immutability is kept; the conversion []byte(s)
// would copy, and allocate for strings over 32 bytes.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func appendFieldLine(dst, name, value []byte) []byte {
	dst = append(dst, name...)
	dst = append(dst, ':', ' ')
	dst = append(dst, value...)
	return append(dst, '\r', '\n')
}

// bodyless reports whether a status never carries content: 1xx (RFC 9110
// §15.2), 204 (§15.3.5) and 304 (§15.4.5). Such responses end with their
// head and must not carry Content-Length or Transfer-Encoding (RFC 9110
// §8.6, RFC 9112 §6.1).
func bodyless(status int) bool {
	return status < 200 || status == 204 || status == 304
}

// Closes reports whether the connection closes after this response, as
// AppendFraming frames it: when Close is set, when an HTTP/1.0 client did
// not ask for keep-alive, and when the body is delimited by the close.
// An interim (1xx) response never closes.
func (h *ResponseHead) Closes() bool {
	status := sentStatus(h.Status)
	if status < 200 {
		return false
	}
	if h.Close || (h.Version == Version10 && !h.KeepAlive10) {
		return true
	}
	return h.ContentLength < 0 && !bodyless(status) && !h.HeadRequest && h.Version == Version10
}

// AppendFraming appends the fields the server owns and the empty line
// that ends the head, and returns how the body must be sent:
//
//   - 1xx, 204, 304: no Content-Length, no Transfer-Encoding, BodyNone.
//   - ContentLength >= 0: "Content-Length: n"; BodyLength, or BodyNone
//     when n is 0 or the request was HEAD.
//   - ContentLength -1 on an HTTP/1.1 request: "Transfer-Encoding:
//     chunked", BodyChunked.
//   - ContentLength -1 on an HTTP/1.0 request: no framing field, the body
//     ends with the connection (RFC 9112 §6.3 rule 8), BodyUntilClose,
//     and "Connection: close".
//   - ContentLength -1 on a HEAD request: no framing field (the length of
//     content that is never generated is not known, RFC 9110 §9.3.2
//     allows omitting it) and BodyNone; the connection stays open.
//
// Then "Connection: close" when Closes() (not for 1xx), or "Connection:
// keep-alive" for an HTTP/1.0 client that keeps the connection; "Date"
// from date unless date is nil; "Server" unless h.Server is nil or
// invalid.
//
// It assumes the caller has written, or dropped, any Content-Length,
// Transfer-Encoding or Connection field the application set, and passes
// a nil date and Server for an application's own Date and Server:
// AppendFraming does not know what was written before it, and a response
// with two framings is a smuggling vector (RFC 9112 §6.3). A 101 response
// needs the caller's own "Connection: upgrade" and "Upgrade" fields.
func AppendFraming(dst []byte, h *ResponseHead, date *DateCache) ([]byte, BodyMode) {
	status := sentStatus(h.Status)
	mode, length := h.Framing()
	if length {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, h.ContentLength, 10)
		dst = append(dst, '\r', '\n')
	}
	if mode == BodyChunked {
		dst = append(dst, "Transfer-Encoding: chunked\r\n"...)
	}
	if h.Closes() {
		dst = append(dst, "Connection: close\r\n"...)
	} else if h.Version == Version10 && status >= 200 {
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	if date != nil {
		dst = append(dst, "Date: "...)
		dst = append(dst, date.stamp().text[:]...)
		dst = append(dst, '\r', '\n')
	}
	if h.Server != nil && ValidFieldValue(h.Server) {
		dst = appendFieldLine(dst, serverName, h.Server)
	}
	return append(dst, '\r', '\n'), mode
}

// Framing is how AppendFraming frames the body (its list above): the
// mode, and whether a Content-Length field gives ContentLength. An
// HTTP/2 head, which has no Transfer-Encoding (RFC 9113 §8.2.2), takes
// the same answer: BodyChunked there is a body that ends with its stream.
func (h *ResponseHead) Framing() (mode BodyMode, length bool) {
	switch {
	case bodyless(sentStatus(h.Status)):
		return BodyNone, false
	case h.ContentLength >= 0:
		if h.ContentLength > 0 && !h.HeadRequest {
			return BodyLength, true
		}
		return BodyNone, true
	case h.HeadRequest:
		return BodyNone, false
	case h.Version == Version10:
		return BodyUntilClose, false
	}
	return BodyChunked, false
}

var serverName = []byte("Server")

var (
	errResponseFieldName  = &Error{Status: 500, Reason: "http1: response field name is not a token"}
	errResponseFieldValue = &Error{Status: 500, Reason: "http1: response field value holds a control character"}
)
