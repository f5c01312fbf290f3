package http1

// KnownHeader identifies a field name the server itself asks about. Each
// parsed field is classified once, so a lookup of a known name is an index
// read whatever the header holds.
type KnownHeader uint8

const (
	HeaderOther KnownHeader = iota // not one of the names below
	HeaderContentLength
	HeaderContentType
	HeaderConnection
	HeaderTransferEncoding
	HeaderHost
	HeaderDate
	HeaderCookie
	HeaderUpgrade
	HeaderExpect
	HeaderServer
	HeaderTE
	HeaderTrailer
	knownHeaderCount
)

var knownHeaderNames = [knownHeaderCount]string{
	HeaderContentLength:    "content-length",
	HeaderContentType:      "content-type",
	HeaderConnection:       "connection",
	HeaderTransferEncoding: "transfer-encoding",
	HeaderHost:             "host",
	HeaderDate:             "date",
	HeaderCookie:           "cookie",
	HeaderUpgrade:          "upgrade",
	HeaderExpect:           "expect",
	HeaderServer:           "server",
	HeaderTE:               "te",
	HeaderTrailer:          "trailer",
}

// String returns the lower-case field name.
func (k KnownHeader) String() string {
	if k == HeaderOther || k >= knownHeaderCount {
		return ""
	}
	return knownHeaderNames[k]
}

// ClassifyHeader returns the KnownHeader for a field name, or HeaderOther.
// It dispatches on length and first byte before one full compare.
func ClassifyHeader(name []byte) KnownHeader { return classify(name) }

// FramingField reports a field the server's framing writes itself
// (AppendFraming): Content-Length, Transfer-Encoding, Connection. An
// app's own is taken as a wish (Connection: close) or checked against
// the body, never copied out as it is.
func FramingField(name []byte) bool {
	switch classify(name) {
	case HeaderContentLength, HeaderTransferEncoding, HeaderConnection:
		return true
	}
	return false
}

func classify[T string | []byte](name T) KnownHeader {
	if len(name) < 2 {
		return HeaderOther
	}
	var k KnownHeader
	switch first := lowerTable[name[0]]; len(name) {
	case 2:
		if first == 't' {
			k = HeaderTE
		}
	case 4:
		switch first {
		case 'h':
			k = HeaderHost
		case 'd':
			k = HeaderDate
		}
	case 6:
		switch first {
		case 'c':
			k = HeaderCookie
		case 'e':
			k = HeaderExpect
		case 's':
			k = HeaderServer
		}
	case 7:
		switch first {
		case 'u':
			k = HeaderUpgrade
		case 't':
			k = HeaderTrailer
		}
	case 10:
		if first == 'c' {
			k = HeaderConnection
		}
	case 12:
		if first == 'c' {
			k = HeaderContentType
		}
	case 14:
		if first == 'c' {
			k = HeaderContentLength
		}
	case 17:
		if first == 't' {
			k = HeaderTransferEncoding
		}
	}
	if k != HeaderOther && EqualFold(name, knownHeaderNames[k]) {
		return k
	}
	return HeaderOther
}

// presenceBit is the bit a name sets in Header.present: from its length
// and its first and last bytes, case-folded. Distinct names may share a
// bit; a clear bit proves a name absent.
func presenceBit[T string | []byte](name T) uint64 {
	n := len(name)
	if n == 0 {
		return 0
	}
	h := uint(n)*31 + uint(lowerTable[name[0]])*7 + uint(lowerTable[name[n-1]])
	return 1 << (h & 63)
}

// Span is a byte range [Start, End) relative to the start of the buffer a
// request head was parsed from.
type Span struct{ Start, End uint32 }

// Len is the span's length in bytes.
func (s Span) Len() int { return int(s.End - s.Start) }

// In returns the span's bytes within buf.
func (s Span) In(buf []byte) []byte { return buf[s.Start:s.End:s.End] }

// Field is one header field line: spans of its name and of its value with
// surrounding whitespace removed.
type Field struct {
	Name, Value Span
	Known       KnownHeader
}

// Header is the field section of a request head, in arrival order, stored
// as spans into the buffer the head was parsed from.
type Header struct {
	buf    []byte
	fields []Field
	// known[k] is 1 + the index of the first field named k, 0 if none.
	known   [knownHeaderCount]uint16
	present uint64
}

// Reset empties the header, keeping its storage for reuse.
func (h *Header) Reset(buf []byte) {
	h.buf = buf
	h.fields = h.fields[:0]
	h.known = [knownHeaderCount]uint16{}
	h.present = 0
}

// Rebase points the header at a copy of the bytes it was parsed from (the
// spans are relative, so they stay valid).
func (h *Header) Rebase(buf []byte) { h.buf = buf }

// add appends a field whose name has already been validated.
func (h *Header) add(name, value Span) {
	nameBytes := name.In(h.buf)
	k := ClassifyHeader(nameBytes)
	h.fields = append(h.fields, Field{Name: name, Value: value, Known: k})
	if k != HeaderOther {
		if h.known[k] == 0 {
			h.known[k] = uint16(len(h.fields))
		}
	} else {
		h.present |= presenceBit(nameBytes)
	}
}

// Len is the number of fields.
func (h *Header) Len() int { return len(h.fields) }

// Field returns the i-th field's name and value as they arrived.
func (h *Header) Field(i int) (name, value []byte) {
	f := &h.fields[i]
	return f.Name.In(h.buf), f.Value.In(h.buf)
}

// Fields returns the fields as spans, in arrival order. The slice is the
// header's own: read it, do not keep it past the next parse.
func (h *Header) Fields() []Field { return h.fields }

// Has reports whether a known field is present.
func (h *Header) Has(k KnownHeader) bool { return h.known[k] != 0 }

// Known returns the value of the first field named k, or nil.
func (h *Header) Known(k KnownHeader) []byte {
	if i := h.known[k]; i != 0 {
		return h.fields[i-1].Value.In(h.buf)
	}
	return nil
}

// Get returns the value of the first field whose name equals name,
// ignoring case, or nil if there is none.
func (h *Header) Get(name string) []byte {
	if i := h.index(name, 0); i >= 0 {
		return h.fields[i].Value.In(h.buf)
	}
	return nil
}

// Values appends the values of every field named name (ignoring case) to
// dst, in arrival order, and returns it.
func (h *Header) Values(dst [][]byte, name string) [][]byte {
	for i := h.index(name, 0); i >= 0; i = h.index(name, i+1) {
		dst = append(dst, h.fields[i].Value.In(h.buf))
	}
	return dst
}

// index returns the index of the first field at or after from named name.
func (h *Header) index(name string, from int) int {
	k := classify(name)
	if k != HeaderOther {
		first := int(h.known[k]) - 1
		if first < 0 {
			return -1
		}
		if from < first {
			from = first
		}
		for i := from; i < len(h.fields); i++ {
			if h.fields[i].Known == k {
				return i
			}
		}
		return -1
	}
	if h.present&presenceBit(name) == 0 {
		return -1
	}
	for i := from; i < len(h.fields); i++ {
		f := &h.fields[i]
		if f.Known == HeaderOther && equalFoldBoth(f.Name.In(h.buf), name) {
			return i
		}
	}
	return -1
}

// equalFoldBoth compares b and s ignoring ASCII case on both sides.
func equalFoldBoth(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lowerTable[b[i]] != lowerTable[s[i]] {
			return false
		}
	}
	return true
}
