package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/http1"
)

// With --log-format json the access log's line is one JSON object, as
// the server's own lines are (log/slog's time, level, msg, pid, worker):
// msg is the line the text format writes, and each atom of
// --access-log-format is a key of its own ("status": 200, "user_agent":
// "curl/8"), so that a collector reads the fields without parsing msg;
// trace_id, the traceparent field's trace id, is in every object.
// An absent value (a head that did not parse, a field not sent) is null;
// %({name}e)s, read once at start, is in msg only.

// jsonKeys names the atoms' keys; the ones the object has anyway (t:
// time, p: pid) or that never carry anything (l, u: always "-") have none.
var jsonKeys = map[byte]string{
	'h': "remote_addr", 'r': "request", 'm': "method", 'U': "path", 'q': "query",
	'H': "protocol", 's': "status", 'b': "bytes", 'B': "bytes", 'f': "referer",
	'a': "user_agent", 'T': "duration_s", 'M': "duration_ms", 'D': "duration_us", 'L': "duration",
	traceIDAtom: "trace_id",
}

// jsonPart is one key of the object and the atom that fills it.
type jsonPart struct {
	key  string // `"status":`, quoted and with its colon
	atom accessPart
}

// setJSON makes f write JSON objects; worker is the worker's slot, -1
// for a single process.
func (f *accessFormat) setJSON(worker int) {
	f.json = true
	f.jsonTail = `,"pid":` + strconv.Itoa(pid)
	if worker >= 0 {
		f.jsonTail += `,"worker":` + strconv.Itoa(worker)
	}
	f.jsonParts = f.jsonParts[:0]
	seen := map[string]bool{}
	for _, p := range f.parts {
		var key string
		switch p.atom {
		case 0:
			continue
		case 'i':
			key = "request_" + strings.ReplaceAll(p.literal, "-", "_")
		case 'o':
			key = "response_" + strings.ReplaceAll(p.literal, "-", "_")
		default:
			key = jsonKeys[p.atom]
		}
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		f.jsonParts = append(f.jsonParts, jsonPart{key: `,"` + key + `":`, atom: p})
	}
	if !seen["trace_id"] {
		// Every object has it, so that the log joins traces whatever the
		// format's atoms.
		f.jsonParts = append(f.jsonParts, jsonPart{key: `,"trace_id":`, atom: accessPart{atom: traceIDAtom}})
	}
}

// appendJSON appends e's object, newline included. The text line is
// built first, past the end of b, then escaped into msg: b's own bytes
// after the line's start are scratch until the object is moved there.
func (f *accessFormat) appendJSON(b []byte, e *accessEntry) []byte {
	start := len(b)
	b = f.appendText(b, e)
	text := b[start : len(b)-1] // without its newline; b may move under it
	b = append(b, `{"time":"`...)
	b = time.Now().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":`...)
	b = appendJSONString(b, text)
	b = append(b, f.jsonTail...)
	for i := range f.jsonParts {
		p := &f.jsonParts[i]
		b = append(b, p.key...)
		b = appendJSONValue(b, &p.atom, e)
	}
	b = append(b, "}\n"...)
	objectStart := start + len(text) + 1
	n := copy(b[start:], b[objectStart:])
	return b[:start+n]
}

// appendJSONValue appends one atom's value: a number, a string, or null.
func appendJSONValue(b []byte, p *accessPart, e *accessEntry) []byte {
	req := e.req
	switch p.atom {
	case 'h':
		if len(e.remote) == 0 {
			return append(b, "null"...) // a Unix socket's peer
		}
		return appendJSONString(b, e.remote)
	case 'r':
		if req == nil {
			return append(b, "null"...)
		}
		b = append(b, '"')
		b = appendJSONText(b, req.Bytes(req.Method))
		b = append(b, ' ')
		b = appendJSONText(b, req.Bytes(req.Target))
		b = append(b, ' ')
		b = append(b, req.Version.String()...)
		return append(b, '"')
	case 'm':
		return appendJSONSpan(b, req, func(r *http1.Request) http1.Span { return r.Method })
	case 'U':
		return appendJSONSpan(b, req, func(r *http1.Request) http1.Span { return r.Path })
	case 'q':
		return appendJSONSpan(b, req, func(r *http1.Request) http1.Span { return r.Query })
	case 'H':
		if req == nil {
			return append(b, "null"...)
		}
		b = append(b, '"')
		b = append(b, req.Version.String()...)
		return append(b, '"')
	case 's':
		return strconv.AppendInt(b, int64(e.status), 10)
	case 'b', 'B':
		return strconv.AppendInt(b, e.sent, 10)
	case 'f':
		return appendJSONField(b, req, "referer")
	case 'a':
		return appendJSONField(b, req, "user-agent")
	case 'i':
		return appendJSONField(b, req, p.literal)
	case 'o':
		if e.resp != nil {
			for i := 0; i < e.resp.HeaderLen(); i++ {
				field, value := e.resp.Header(i)
				if http1.EqualFold(field, p.literal) && len(value) > 0 {
					return appendJSONString(b, value)
				}
			}
		}
		return append(b, "null"...)
	case 'T':
		return strconv.AppendInt(b, int64(e.duration/time.Second), 10)
	case 'M':
		return strconv.AppendInt(b, int64(e.duration/time.Millisecond), 10)
	case 'D':
		return strconv.AppendInt(b, int64(e.duration/time.Microsecond), 10)
	case 'L':
		return strconv.AppendFloat(b, e.duration.Seconds(), 'f', 6, 64)
	case traceIDAtom:
		if id := traceID(req); id != nil {
			return appendJSONString(b, id)
		}
	}
	return append(b, "null"...)
}

func appendJSONSpan(b []byte, req *http1.Request, span func(*http1.Request) http1.Span) []byte {
	if req == nil {
		return append(b, "null"...)
	}
	part := req.Bytes(span(req))
	if len(part) == 0 {
		return append(b, "null"...)
	}
	return appendJSONString(b, part)
}

func appendJSONField(b []byte, req *http1.Request, name string) []byte {
	if req == nil {
		return append(b, "null"...)
	}
	value := req.Header.Get(name)
	if len(value) == 0 {
		return append(b, "null"...)
	}
	return appendJSONString(b, value)
}

// appendJSONString appends p as a JSON string.
func appendJSONString(b, p []byte) []byte {
	b = append(b, '"')
	b = appendJSONText(b, p)
	return append(b, '"')
}

// appendJSONText appends p escaped for a JSON string. A byte outside
// ASCII is its Latin-1 code point (\u00e9), as PEP 3333 decodes a head's
// bytes: invalid UTF-8 from a client stays valid JSON and forges nothing.
func appendJSONText(b, p []byte) []byte {
	const hex = "0123456789abcdef"
	for _, c := range p {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c > 0x7e:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}
