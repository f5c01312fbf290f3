package loop

import (
	"bytes"
	"fmt"

	"github.com/m0serve/m0serve/http1"
)

// maxDefaultHeaders bounds Config.Headers: the names a handler set are
// one word of bits, with Server and Date (fieldBit).
const maxDefaultHeaders = 62

// defaultField is one Config.Headers field, encoded once.
type defaultField struct {
	name  string // lower case, to compare with the handler's names
	line  []byte // "Name: value\r\n"
	value string // the value alone, for HTTP/2
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
		line, spans, err := http1.AppendFieldSpan(nil, nil, h.Name, h.Value)
		if err != nil {
			return nil, fmt.Errorf("loop: Headers: %q: %w", h.Name, err)
		}
		out = append(out, defaultField{name: name, line: line, value: string(spans[0].Value(line))})
	}
	return out, nil
}

// Bits of a response's set of handler field names (fieldBit): bit i <
// maxDefaultHeaders is Config.Headers[i].
const (
	serverBit = 1 << 62
	dateBit   = 1 << 63
)

// fieldBit is the bit of a handler field's name in the set appendDefaults
// reads: Server, Date or a Config.Headers name; 0 for any other. Writers
// collect it as fields are added, so the head is not scanned again.
func fieldBit[T string | []byte](l *Loop, name T) uint64 {
	switch len(name) {
	case len("date"):
		if lowerEqual(name, "date") {
			return dateBit
		}
	case len("server"):
		if lowerEqual(name, "server") {
			return serverBit
		}
	}
	var bits uint64
	for i := range l.defaults {
		if lowerEqual(name, l.defaults[i].name) {
			bits |= 1 << i
		}
	}
	return bits
}

// appendDefaults appends the Config.Headers fields not in set (the
// handler's names, fieldBit) and returns the Server value and the Date
// source to frame the head with: nil where the handler set its own (kept,
// as uvicorn keeps an app's) or the Config sends none.
func (l *Loop) appendDefaults(dst []byte, set uint64) ([]byte, []byte, *http1.DateCache) {
	server, date := l.cfg.Server, &l.date
	if l.cfg.NoDate || set&dateBit != 0 {
		date = nil
	}
	if set&serverBit != 0 {
		server = nil
	}
	for i := range l.defaults {
		if set&(1<<i) == 0 {
			dst = append(dst, l.defaults[i].line...)
		}
	}
	return dst, server, date
}

// lowerEqual reports whether b equals lower, ignoring ASCII case in b.
func lowerEqual[T string | []byte](b T, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
