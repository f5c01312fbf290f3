package loop

import (
	"strconv"

	"github.com/m0serve/m0serve/http1"
	"golang.org/x/net/http2/hpack"
)

// A response head's fields as HPACK takes them (RFC 9113 §8.2), built
// from where each field was set rather than from its HTTP/1.1 text: a
// handler's field is appended by http1.AppendFieldSpan, which checks it
// (a token name; no CR, LF, NUL or other control in the value) and
// records its span, and each span becomes one field here, so no value
// can become two fields, and no name a pseudo-header. The loop's own
// fields (the Config's defaults, the framing, Date and Server) come from
// their values, never from lines.

// internLimit bounds the loop's table of response field strings.
const internLimit = 4096

// errorFieldText and errorFieldSpans are errorFields with their span, for
// the loop's own error answers on a stream.
var errorFieldText, errorFieldSpans = func() ([]byte, []http1.FieldSpan) {
	text, spans, err := http1.AppendFieldSpanString(nil, nil, "Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		panic(err)
	}
	return text, spans
}()

// streamFields is the field list of a response head on a stream: the
// handler's fields (text and their spans; set: their fieldBits), the
// Config's defaults the handler did not set, and what AppendFraming
// would write but HTTP/2 has no use for (Transfer-Encoding, Connection):
// the content-length, Date and Server. It reports how the body is framed:
// BodyNone ends the stream with its HEADERS. A nil head frames nothing
// (an extended CONNECT's 200, RFC 8441 §5). extra go first (a WebSocket's
// negotiated fields).
func (l *Loop) streamFields(text []byte, spans []http1.FieldSpan, set uint64, head *http1.ResponseHead,
	extra ...hpack.HeaderField) ([]hpack.HeaderField, http1.BodyMode) {
	mode, length := http1.BodyNone, false
	if head != nil {
		mode, length = head.Framing()
	}
	// The handler's content-length is dropped where the loop frames the
	// body (one content-length at most, §8.1.1); it stays on an answer to
	// HEAD of unknown length, where it tells the GET's.
	keepLength := head != nil && head.HeadRequest && !length
	list := append(l.h2List[:0], extra...)
	list = l.appendSpanFields(list, text, spans, keepLength)
	server, date := l.cfg.Server, &l.date
	if l.cfg.NoDate || set&dateBit != 0 {
		date = nil
	}
	if set&serverBit != 0 {
		server = nil
	}
	for i := range l.defaults {
		if d := &l.defaults[i]; set&(1<<i) == 0 {
			list = append(list, hpack.HeaderField{Name: d.name, Value: d.value})
		}
	}
	if length {
		l.h2Block = strconv.AppendInt(l.h2Block[:0], head.ContentLength, 10)
		list = append(list, hpack.HeaderField{Name: "content-length", Value: l.intern(l.h2Block)})
	}
	if date != nil {
		l.h2Block = date.AppendDate(l.h2Block[:0])
		list = append(list, hpack.HeaderField{Name: "date", Value: l.intern(l.h2Block)})
	}
	if server != nil && http1.ValidFieldValue(server) {
		list = append(list, hpack.HeaderField{Name: "server", Value: l.intern(server)})
	}
	l.h2List = list
	return list, mode
}

// trailerFields is the field list of a job's trailers (SetTrailer's,
// which refuses the framing and connection names already).
func (l *Loop) trailerFields(text []byte, spans []http1.FieldSpan) []hpack.HeaderField {
	list := l.appendSpanFields(l.h2List[:0], text, spans, false)
	l.h2List = list
	return list
}

// appendSpanFields appends a field for each span of text: the name in
// lower case (§8.2.1), a connection-specific field (§8.2.2) dropped, and
// content-length unless keepLength. The checks AppendFieldSpan made are
// made again on what is sent, so that a span that came another way could
// not carry a line break or a pseudo-header name either. The strings are
// interned: HPACK's dynamic table keeps them, and a response's fields
// repeat, so a steady stream of responses allocates none.
func (l *Loop) appendSpanFields(list []hpack.HeaderField, text []byte, spans []http1.FieldSpan, keepLength bool) []hpack.HeaderField {
	for _, span := range spans {
		name, value := span.Name(text), span.Value(text)
		lower := l.h2Lower[:0]
		for _, c := range name {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower = append(lower, c)
		}
		l.h2Lower = lower
		if connectionSpecific(lower) || !keepLength && string(lower) == "content-length" ||
			!http1.ValidFieldName(lower) || !http1.ValidFieldValue(value) {
			continue
		}
		list = append(list, hpack.HeaderField{Name: l.intern(lower), Value: l.intern(value)})
	}
	return list
}

// connectionSpecific says whether a lower-case name is one an HTTP/2
// message must not carry (RFC 9113 §8.2.2): Connection and RFC 9110
// §7.6.1's, and TE, which only a request may carry.
func connectionSpecific(name []byte) bool {
	switch string(name) {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te":
		return true
	}
	return false
}

// intern returns b as a string from the loop's table, adding it; the
// table is emptied when full (a Date a second, cookies), never grown.
func (l *Loop) intern(b []byte) string {
	if s, ok := l.h2Strings[string(b)]; ok {
		return s
	}
	if l.h2Strings == nil {
		l.h2Strings = make(map[string]string)
	} else if len(l.h2Strings) >= internLimit {
		clear(l.h2Strings)
	}
	s := string(b)
	l.h2Strings[s] = s
	return s
}
