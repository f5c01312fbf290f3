package server

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/pybridge"
)

// DefaultAccessLogFormat is the Common Log Format in gunicorn's atoms.
const DefaultAccessLogFormat = `%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s`

// accessFormat is a compiled --access-log-format: a list of parts, each
// a literal or an atom, appended to a reused line without allocating.
type accessFormat struct {
	parts []accessPart
	// timed: some atom wants the request's duration.
	timed bool

	// json: --log-format json (accessjson.go): one object per line,
	// with jsonTail (pid, worker) after msg and a key per atom.
	json      bool
	jsonTail  string
	jsonParts []jsonPart
}

type accessPart struct {
	atom    byte   // 0: literal; else gunicorn's atom letter, 'i'/'o' for headers
	literal string // the text, or the header name of {name}i / {name}o
}

// accessEntry is one response as the access log sees it.
type accessEntry struct {
	remote   []byte
	req      *http1.Request     // nil: the head did not parse
	resp     *pybridge.Response // the app's response fields; nil: none
	status   int
	sent     int64
	duration time.Duration // from the head's arrival; 0 when unknown

	// The last second's %(t)s text, kept by its owner across lines:
	// formatting a time costs more than the rest of the line.
	stampSecond int64
	stamp       []byte
}

// setResponse fills e for one response, keeping its time stamp cache.
func (e *accessEntry) setResponse(remote []byte, req *http1.Request, resp *pybridge.Response, status int, sent int64) {
	e.remote, e.req, e.resp, e.status, e.sent, e.duration = remote, req, resp, status, sent, 0
}

// appendTime appends now as [02/Jan/2006:15:04:05 +0000].
func (e *accessEntry) appendTime(b []byte) []byte {
	now := time.Now()
	if second := now.Unix(); second != e.stampSecond || len(e.stamp) == 0 {
		e.stampSecond = second
		e.stamp = now.UTC().AppendFormat(append(e.stamp[:0], '['), "02/Jan/2006:15:04:05 -0700")
		e.stamp = append(e.stamp, ']')
	}
	return append(b, e.stamp...)
}

// compileAccessFormat parses gunicorn's access_log_format: %(x)s atoms,
// %({name}i)s and %({name}o)s for request and response fields,
// %({name}e)s for an environment variable (read once), %% for %; and
// %(trace_id)s, the traceparent field's trace id (tracecontext.go).
func compileAccessFormat(format string) (*accessFormat, error) {
	f := &accessFormat{}
	bad := func(reason string) (*accessFormat, error) {
		return nil, &ConfigError{Flag: "access-log-format", Reason: reason}
	}
	var literal strings.Builder
	flush := func() {
		if literal.Len() > 0 {
			f.parts = append(f.parts, accessPart{literal: literal.String()})
			literal.Reset()
		}
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			literal.WriteByte(c)
			continue
		}
		rest := format[i+1:]
		if strings.HasPrefix(rest, "%") {
			literal.WriteByte('%')
			i++
			continue
		}
		end := strings.Index(rest, ")s")
		if !strings.HasPrefix(rest, "(") || end < 0 {
			return bad(fmt.Sprintf("%q at %d: want %%(atom)s or %%%%", format[i:min(len(format), i+8)], i))
		}
		name := rest[1:end]
		i += 1 + end + 1
		if len(name) > 3 && name[0] == '{' && name[len(name)-2] == '}' {
			field, kind := name[1:len(name)-2], name[len(name)-1]
			switch kind {
			case 'i', 'o':
				flush()
				f.parts = append(f.parts, accessPart{atom: kind, literal: strings.ToLower(field)})
			case 'e':
				literal.WriteString(os.Getenv(field))
			default:
				return bad(fmt.Sprintf("%%(%s)s: want {name}i, {name}o or {name}e", name))
			}
			continue
		}
		if name == "trace_id" {
			flush()
			f.parts = append(f.parts, accessPart{atom: traceIDAtom})
			continue
		}
		if len(name) != 1 || !strings.Contains("hlutrmUqHsbBfaTMDLp", name) {
			return bad(fmt.Sprintf("%%(%s)s: unknown atom (gunicorn's: h l u t r m U q H s b B f a T M D L p, {name}i, {name}o, {name}e; and trace_id)", name))
		}
		flush()
		f.parts = append(f.parts, accessPart{atom: name[0]})
		f.timed = f.timed || strings.Contains("TMDL", name)
	}
	flush()
	return f, nil
}

// append appends e's line, newline included: the text, or with
// --log-format json its object.
func (f *accessFormat) append(b []byte, e *accessEntry) []byte {
	if f.json {
		return f.appendJSON(b, e)
	}
	return f.appendText(b, e)
}

// appendText appends e's line in the format's text, newline included.
func (f *accessFormat) appendText(b []byte, e *accessEntry) []byte {
	for i := range f.parts {
		p := &f.parts[i]
		switch p.atom {
		case 0:
			b = append(b, p.literal...)
		case 'h':
			if len(e.remote) == 0 {
				b = append(b, '-') // a Unix socket's peer
			} else {
				b = append(b, e.remote...)
			}
		case 'l', 'u':
			b = append(b, '-')
		case 't':
			b = e.appendTime(b)
		case 'r':
			if e.req == nil {
				b = append(b, '-')
				break
			}
			b = appendPrintable(b, e.req.Bytes(e.req.Method))
			b = append(b, ' ')
			b = appendPrintable(b, e.req.Bytes(e.req.Target))
			b = append(b, ' ')
			b = append(b, e.req.Version.String()...)
		case 'm':
			b = appendRequestPart(b, e.req, func(r *http1.Request) http1.Span { return r.Method })
		case 'U':
			b = appendRequestPart(b, e.req, func(r *http1.Request) http1.Span { return r.Path })
		case 'q':
			b = appendRequestPart(b, e.req, func(r *http1.Request) http1.Span { return r.Query })
		case 'H':
			if e.req == nil {
				b = append(b, '-')
			} else {
				b = append(b, e.req.Version.String()...)
			}
		case 's':
			b = strconv.AppendInt(b, int64(e.status), 10)
		case 'b':
			if e.sent > 0 {
				b = strconv.AppendInt(b, e.sent, 10)
			} else {
				b = append(b, '-')
			}
		case 'B':
			b = strconv.AppendInt(b, e.sent, 10)
		case 'f':
			b = appendRequestField(b, e.req, "referer")
		case 'a':
			b = appendRequestField(b, e.req, "user-agent")
		case 'i':
			b = appendRequestField(b, e.req, p.literal)
		case 'o':
			b = appendResponseField(b, e.resp, p.literal)
		case 'T':
			b = strconv.AppendInt(b, int64(e.duration/time.Second), 10)
		case 'M':
			b = strconv.AppendInt(b, int64(e.duration/time.Millisecond), 10)
		case 'D':
			b = strconv.AppendInt(b, int64(e.duration/time.Microsecond), 10)
		case 'L':
			b = strconv.AppendFloat(b, e.duration.Seconds(), 'f', 6, 64)
		case 'p':
			b = strconv.AppendInt(b, int64(pid), 10)
		case traceIDAtom:
			if id := traceID(e.req); id != nil {
				b = append(b, id...)
			} else {
				b = append(b, '-')
			}
		}
	}
	return append(b, '\n')
}

var pid = os.Getpid()

func appendRequestPart(b []byte, req *http1.Request, span func(*http1.Request) http1.Span) []byte {
	if req == nil {
		return append(b, '-')
	}
	part := req.Bytes(span(req))
	if len(part) == 0 {
		return append(b, '-')
	}
	return appendPrintable(b, part)
}

func appendRequestField(b []byte, req *http1.Request, name string) []byte {
	if req == nil {
		return append(b, '-')
	}
	value := req.Header.Get(name)
	if len(value) == 0 {
		return append(b, '-')
	}
	return appendPrintable(b, value)
}

func appendResponseField(b []byte, resp *pybridge.Response, name string) []byte {
	if resp != nil {
		for i := 0; i < resp.HeaderLen(); i++ {
			field, value := resp.Header(i)
			if http1.EqualFold(field, name) && len(value) > 0 {
				return appendPrintable(b, value)
			}
		}
	}
	return append(b, '-')
}
