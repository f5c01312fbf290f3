package http1

import "math/bits"

// The chunked transfer coding, RFC 9112 §7.1:
//
//	chunked-body   = *chunk last-chunk trailer-section CRLF
//	chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//	chunk-size     = 1*HEXDIG
//	last-chunk     = 1*("0") [ chunk-ext ] CRLF
//	chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//	trailer-section = *( field-line CRLF )

// AppendChunk appends data as one chunk: its size in hex, CRLF, the data,
// CRLF. Empty data appends nothing, because a zero-size chunk is the last
// chunk and would end the body.
func AppendChunk(dst, data []byte) []byte {
	if len(data) == 0 {
		return dst
	}
	dst = AppendChunkHeader(dst, len(data))
	dst = append(dst, data...)
	return append(dst, '\r', '\n')
}

// AppendChunkHeader appends the line that starts a chunk of n bytes, for a
// caller that sends the data from its own buffer (writev): send the data
// next, then CRLF, which may lead the next chunk's header. n <= 0 appends
// nothing, as in AppendChunk.
func AppendChunkHeader(dst []byte, n int) []byte {
	if n <= 0 {
		return dst
	}
	const hexDigits = "0123456789abcdef"
	for shift := (bits.Len64(uint64(n)) + 3) / 4 * 4; shift > 0; {
		shift -= 4
		dst = append(dst, hexDigits[uint64(n)>>shift&0xF])
	}
	return append(dst, '\r', '\n')
}

// AppendLastChunk appends the last chunk, the trailer fields and the empty
// line that ends the body: "0\r\n" trailers "\r\n". Trailer fields are
// validated as AppendField does; on an invalid one nothing is appended.
// Which fields may be sent as trailers (RFC 9110 §6.5.1: not framing,
// routing or authentication fields) is the caller's business.
func AppendLastChunk(dst []byte, trailers ...FieldLine) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '0', '\r', '\n')
	for i := range trailers {
		var err error
		if dst, err = AppendField(dst, trailers[i].Name, trailers[i].Value); err != nil {
			return dst[:start], err
		}
	}
	return append(dst, '\r', '\n'), nil
}

// Limits of the chunked decoder.
const (
	// MaxChunkLineBytes bounds a chunk-size line, extensions and CRLF
	// included: extensions are skipped, never stored, but without a bound
	// a client could stream an endless line. 4 KiB is also where Go's
	// net/http gives up.
	MaxChunkLineBytes = 4096
	// DefaultMaxTrailerBytes bounds the trailer section when
	// ChunkedDecoder.MaxTrailerBytes is 0; it matches DefaultLimits'
	// request head size.
	DefaultMaxTrailerBytes = 8 << 10
	// MaxTrailerFields bounds the number of trailer fields (431 beyond),
	// as DefaultLimits bounds request header fields; it also keeps the
	// field index of a Header far inside its 16 bits whatever
	// MaxTrailerBytes is.
	MaxTrailerFields = 100
	// maxChunkDigits: sixteen hex digits fill a uint64, so a longer size
	// (leading zeros included, as Go counts them) is refused before it
	// could overflow.
	maxChunkDigits = 16
	// maxChunkSize keeps every size, and any sum a caller forms of two,
	// inside int64.
	maxChunkSize = 1 << 62
)

// Rejections of a chunked body. Each is shared, so returning one
// allocates nothing; the caller must not modify them.
var (
	errChunkSize         = &Error{400, "chunked body: invalid chunk size"}
	errChunkSizeTooLarge = &Error{400, "chunked body: chunk size too large"}
	errChunkExtension    = &Error{400, "chunked body: malformed chunk extension"}
	errChunkSizeSpace    = &Error{400, "chunked body: whitespace after chunk size without an extension"}
	errChunkLineTooLong  = &Error{400, "chunked body: chunk-size line too long"}
	errChunkBareCR       = &Error{400, "chunked body: bare CR"}
	errChunkBareLF       = &Error{400, "chunked body: line ends in a bare LF"}
	errChunkDataEnd      = &Error{400, "chunked body: chunk data not followed by CRLF"}
	errChunkBodyTooLarge = &Error{413, "chunked body: body too large"}
	errTrailerFold       = &Error{400, "chunked body: whitespace before a trailer field (obs-fold)"}
	errTrailerName       = &Error{400, "chunked body: invalid trailer field name"}
	errTrailerSpaceColon = &Error{400, "chunked body: whitespace between trailer field name and colon"}
	errTrailerControl    = &Error{400, "chunked body: control character in trailer field"}
	errTrailerTooLarge   = &Error{431, "chunked body: trailer section too large"}
	errTrailerTooMany    = &Error{431, "chunked body: too many trailer fields"}
)

type chunkState uint8

const (
	stateSizeStart      chunkState = iota // first hex digit of a chunk-size
	stateSize                             // more hex digits, or what follows them
	stateAfterSize                        // after the digits: BWS, ';' or CR
	stateSizeSpace                        // BWS after the size: more of it or ';'
	stateExtBeforeName                    // after ';': BWS, then an extension name
	stateExtName                          // in an extension name
	stateExtAfterName                     // BWS after a name: '=' or ';'
	stateExtBeforeValue                   // after '=': BWS, then a token or a quoted string
	stateExtValue                         // in a token value
	stateExtQuoted                        // in a quoted-string value
	stateExtQuotedPair                    // after a backslash in a quoted string
	stateExtValueEnd                      // right after a value: ';', BWS or CR
	stateExtAfterValue                    // BWS after a value: more of it or ';'
	stateSizeLF                           // the LF after a chunk-size line's CR
	stateData                             // chunk-data, size bytes left
	stateDataCR                           // the CRLF after chunk-data
	stateDataLF                           //
	stateTrailerStart                     // a trailer field line, or the final CRLF
	stateTrailerLine                      // inside a trailer field line
	stateTrailerLF                        // the LF after a trailer line's CR
	stateEndLF                            // the LF of the final CRLF
	stateDone                             // the body has ended
	stateFailed                           // an error was returned
)

// ChunkedDecoder decodes a chunked body (RFC 9112 §7.1) incrementally,
// over any split of the input across reads, without copying the data and
// without allocating per chunk. Its zero value is ready; Reset readies it
// for the next body and keeps its storage.
//
// Rules, each stricter than or equal to what RFC 9112 permits:
//   - Every line in the body ends in CRLF. A bare LF is refused even in
//     the trailer section, although RFC 9112 §2.2 lets a recipient accept
//     one in field lines: erratum 7633 refuses it for chunk lines, and
//     disagreeing with a front proxy about where a chunked body ends is
//     request smuggling (CVE-2025-22871). A bare CR is refused (§2.2).
//   - chunk-size is 1 to 16 hex digits and at most 2^62.
//   - Chunk extensions follow their grammar (§7.1.1, see chunkext.go)
//     and are then dropped; whitespace after the size is BWS, allowed
//     only before ';'. The whole line is bounded by MaxChunkLineBytes.
//   - chunk-data must be followed by exactly CRLF (§7.1).
//   - Trailer fields follow the request header rules (RFC 9112 §5):
//     token name, no whitespace before the colon, no obs-fold, no control
//     byte but HTAB in the value; the section is bounded by
//     MaxTrailerBytes (431 beyond).
type ChunkedDecoder struct {
	// MaxTrailerBytes bounds the trailer section, line ends included;
	// 0 means DefaultMaxTrailerBytes.
	MaxTrailerBytes int
	// MaxBodyBytes bounds the sum of the chunk sizes (413 beyond); 0 means
	// no bound.
	MaxBodyBytes int64

	state     chunkState
	digits    uint8
	remaining uint64 // chunk-size being read, then chunk-data bytes left
	lineBytes int    // bytes of the current chunk-size line so far
	total     int64  // sum of the chunk sizes so far
	err       error  // the error that failed the decoder

	trailerBytes int    // bytes of the trailer section so far
	lineStart    int    // where the current trailer line starts in buf
	buf          []byte // trailer field lines, without their CRLF
	trailers     Header
}

// Reset readies the decoder for a new body, keeping its limits and its
// trailer storage.
func (d *ChunkedDecoder) Reset() {
	d.state = stateSizeStart
	d.digits = 0
	d.remaining = 0
	d.lineBytes = 0
	d.total = 0
	d.err = nil
	d.trailerBytes = 0
	d.lineStart = 0
	d.buf = d.buf[:0]
	d.trailers.Reset(d.buf)
}

// Done reports whether the body, trailers included, has ended.
func (d *ChunkedDecoder) Done() bool { return d.state == stateDone }

// Trailers returns the trailer fields of a finished body, in arrival
// order. It is the decoder's own and valid until Reset.
func (d *ChunkedDecoder) Trailers() *Header { return &d.trailers }

// Decode consumes chunk framing and data from the front of in. It returns
// the body bytes it found, how many bytes of in it consumed, and whether
// the body (last chunk and trailer section) is complete.
//
// data is a sub-slice of in, no copy: it is the end of in[:consumed],
// after any framing consumed before it. A call returns at most one span
// of data and stops right after it, so call again with in[consumed:]
// until done; when a call returns no data and is not done, it consumed
// all of in and needs more bytes. When done, in[consumed:] is what
// follows the body (a pipelined request). A split line, size or trailer
// is remembered: feed the rest in the next call.
//
// err is a *Error: 400 for malformed framing, 413 over MaxBodyBytes, 431
// over MaxTrailerBytes; consumed then says roughly where the fault is,
// and the connection must close, since the framing of what follows is
// unknown. Once done, or failed, the decoder keeps answering the same
// (consuming nothing) until Reset.
func (d *ChunkedDecoder) Decode(in []byte) (data []byte, consumed int, done bool, err error) {
	switch d.state {
	case stateDone:
		return nil, 0, true, nil
	case stateFailed:
		return nil, 0, false, d.err
	}
	i := 0
	for i < len(in) {
		c := in[i]
		switch d.state {
		case stateSizeStart:
			v := hexValue(c)
			if v > 0xF {
				return d.fail(i, errChunkSize)
			}
			d.remaining, d.digits, d.lineBytes = uint64(v), 1, 1
			d.state = stateSize
			i++

		case stateSize:
			if v := hexValue(c); v <= 0xF {
				if d.digits == maxChunkDigits {
					return d.fail(i, errChunkSizeTooLarge)
				}
				d.remaining = d.remaining<<4 | uint64(v)
				d.digits++
				d.lineBytes++
				i++
				continue
			}
			if d.remaining > maxChunkSize {
				return d.fail(i, errChunkSizeTooLarge)
			}
			if d.MaxBodyBytes > 0 && int64(d.remaining) > d.MaxBodyBytes-d.total {
				return d.fail(i, errChunkBodyTooLarge)
			}
			d.total += int64(d.remaining)
			d.state = stateAfterSize

		case stateSizeLF:
			if c != '\n' {
				return d.fail(i, errChunkBareCR)
			}
			i++
			if d.lineBytes++; d.lineBytes > MaxChunkLineBytes {
				return d.fail(i, errChunkLineTooLong)
			}
			if d.remaining == 0 {
				d.state = stateTrailerStart
				d.buf = d.buf[:0]
				d.trailers.Reset(d.buf)
			} else {
				d.state = stateData
			}

		case stateData:
			n := len(in) - i
			if uint64(n) > d.remaining {
				n = int(d.remaining)
			}
			d.remaining -= uint64(n)
			if d.remaining == 0 {
				d.state = stateDataCR
			}
			return in[i : i+n : i+n], i + n, false, nil

		case stateDataCR:
			if c != '\r' {
				return d.fail(i, errChunkDataEnd)
			}
			d.state = stateDataLF
			i++

		case stateDataLF:
			if c != '\n' {
				return d.fail(i, errChunkDataEnd)
			}
			d.state = stateSizeStart
			i++

		case stateAfterSize, stateSizeSpace, stateExtBeforeName, stateExtName, stateExtAfterName,
			stateExtBeforeValue, stateExtValue, stateExtQuoted, stateExtQuotedPair, stateExtValueEnd,
			stateExtAfterValue:
			if err := d.sizeLineByte(c); err != nil {
				return d.fail(i, err)
			}
			i++
			if d.lineBytes++; d.lineBytes > MaxChunkLineBytes {
				return d.fail(i, errChunkLineTooLong)
			}

		default:
			var err error
			if i, err = d.decodeTrailer(in, i); err != nil {
				return nil, i, false, err
			}
			if d.state == stateDone {
				return nil, i, true, nil
			}
		}
	}
	return nil, i, false, nil
}

// decodeTrailer consumes trailer-section bytes from in[i:], copying field
// lines into the decoder's buffer: they may arrive split across reads,
// and the caller's buffer moves on. The section is small and rare, so the
// copy is the simple way to keep split and whole lines one case.
func (d *ChunkedDecoder) decodeTrailer(in []byte, i int) (int, error) {
	for i < len(in) {
		switch d.state {
		case stateTrailerStart:
			switch in[i] {
			case '\r':
				if err := d.countTrailer(1); err != nil {
					return d.failTrailer(i, err)
				}
				d.state = stateEndLF
				i++
				continue
			case ' ', '\t':
				// RFC 9112 §5.2: obs-fold must be refused or replaced;
				// refused, as in request heads.
				return d.failTrailer(i, errTrailerFold)
			}
			if d.buf == nil {
				// Allocated once per decoder, at its first trailer field;
				// bodies without trailers never pay for it.
				d.buf = make([]byte, 0, DefaultMaxTrailerBytes)
			}
			d.lineStart = len(d.buf)
			d.state = stateTrailerLine

		case stateTrailerLine:
			j := scanControl(in, i)
			for j < len(in) && in[j] == '\t' {
				j = scanControl(in, j+1)
			}
			if err := d.countTrailer(j - i); err != nil {
				return d.failTrailer(i, err)
			}
			d.buf = append(d.buf, in[i:j]...)
			i = j
			if j == len(in) {
				continue
			}
			switch in[j] {
			case '\r':
				d.state = stateTrailerLF
			case '\n':
				return d.failTrailer(j, errChunkBareLF)
			default:
				return d.failTrailer(j, errTrailerControl)
			}
			if err := d.countTrailer(1); err != nil {
				return d.failTrailer(i, err)
			}
			i++

		case stateTrailerLF:
			if in[i] != '\n' {
				return d.failTrailer(i, errChunkBareCR)
			}
			if err := d.countTrailer(1); err != nil {
				return d.failTrailer(i, err)
			}
			i++
			if err := d.addTrailer(); err != nil {
				return d.failTrailer(i, err)
			}
			d.state = stateTrailerStart

		case stateEndLF:
			if in[i] != '\n' {
				return d.failTrailer(i, errChunkBareCR)
			}
			if err := d.countTrailer(1); err != nil {
				return d.failTrailer(i, err)
			}
			d.state = stateDone
			return i + 1, nil

		}
	}
	return i, nil
}

// addTrailer parses the line buf[lineStart:] as field-name ":" OWS
// field-value OWS (RFC 9112 §5); control bytes were refused as it
// arrived.
func (d *ChunkedDecoder) addTrailer() error {
	line := d.buf[d.lineStart:]
	nameEnd := scanToken(line, 0)
	if nameEnd == len(line) || line[nameEnd] != ':' {
		if nameEnd < len(line) && isSpace(line[nameEnd]) {
			// RFC 9112 §5.1: no whitespace between name and colon.
			return errTrailerSpaceColon
		}
		return errTrailerName
	}
	if nameEnd == 0 {
		return errTrailerName
	}
	valueStart, valueEnd := nameEnd+1, len(line)
	for valueStart < valueEnd && isSpace(line[valueStart]) {
		valueStart++
	}
	for valueEnd > valueStart && isSpace(line[valueEnd-1]) {
		valueEnd--
	}
	if d.trailers.Len() == MaxTrailerFields {
		return errTrailerTooMany
	}
	base := uint32(d.lineStart)
	d.trailers.Rebase(d.buf)
	d.trailers.add(Span{base, base + uint32(nameEnd)}, Span{base + uint32(valueStart), base + uint32(valueEnd)})
	return nil
}

func (d *ChunkedDecoder) countTrailer(n int) error {
	limit := d.MaxTrailerBytes
	if limit <= 0 {
		limit = DefaultMaxTrailerBytes
	}
	if d.trailerBytes += n; d.trailerBytes > limit {
		return errTrailerTooLarge
	}
	return nil
}

func (d *ChunkedDecoder) fail(i int, err error) ([]byte, int, bool, error) {
	d.state = stateFailed
	d.err = err
	return nil, i, false, err
}

func (d *ChunkedDecoder) failTrailer(i int, err error) (int, error) {
	_, i, _, err = d.fail(i, err)
	return i, err
}
