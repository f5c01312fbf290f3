package loop

import (
	"bytes"
	"fmt"

	"github.com/m0serve/m0serve/http1"
)

// maxDefaultHeaders bounds Config.Headers: a response's scan marks the
// ones its handler set in one word.
const maxDefaultHeaders = 64

// defaultField is one Config.Headers field, encoded once.
type defaultField struct {
	name string // lower case, to compare with the handler's names
	line []byte // "Name: value\r\n"
}

// encodeDefaults checks and encodes Config.Headers. Framing and
// hop-by-hop names are the loop's own; Server and Date have fields of
// their own in Config.
func encodeDefaults(headers []http1.FieldLine) ([]defaultField, error) {
	if len(headers) > maxDefaultHeaders {
		return nil, fmt.Errorf("loop: %d Headers: at most %d", len(headers), maxDefaultHeaders)
	}
	out := make([]defaultField, 0, len(headers))
	for _, h := range headers {
		name := string(bytes.ToLower(h.Name))
		switch name {
		case "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
			"proxy-connection", "server", "date":
			return nil, fmt.Errorf("loop: Headers: %s is the server's to write", h.Name)
		}
		line, err := http1.AppendField(nil, h.Name, h.Value)
		if err != nil {
			return nil, fmt.Errorf("loop: Headers: %q: %w", h.Name, err)
		}
		out = append(out, defaultField{name: name, line: line})
	}
	return out, nil
}

// appendDefaults appends the Config.Headers fields that fields (a
// handler's, encoded by http1.AppendField) does not name, and returns the
// Server value and the Date source to frame the head with: nil where the
// handler set its own (kept, as uvicorn keeps an app's) or the Config
// sends none. It allocates nothing.
func (l *Loop) appendDefaults(dst, fields []byte) ([]byte, []byte, *http1.DateCache) {
	server, date := l.cfg.Server, &l.date
	if l.cfg.NoDate {
		date = nil
	}
	var set uint64 // bit i: the handler set defaults[i]
	for len(fields) > 0 {
		colon := bytes.IndexByte(fields, ':')
		end := bytes.IndexByte(fields, '\n')
		if colon < 0 || end < colon {
			break
		}
		name := fields[:colon]
		fields = fields[end+1:]
		switch {
		case lowerEqual(name, "server"):
			server = nil
		case lowerEqual(name, "date"):
			date = nil
		default:
			for i := range l.defaults {
				if lowerEqual(name, l.defaults[i].name) {
					set |= 1 << i
				}
			}
		}
	}
	for i := range l.defaults {
		if set&(1<<i) == 0 {
			dst = append(dst, l.defaults[i].line...)
		}
	}
	return dst, server, date
}

// lowerEqual reports whether b equals lower, ignoring ASCII case in b.
func lowerEqual(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
