package http1

import "errors"

// ErrIncomplete means the buffer ends before the request head does: call
// Parse again, with the same Request, once more bytes have been appended.
var ErrIncomplete = errors.New("http1: incomplete request head")

// Rejections. Each is a shared value, so returning one allocates nothing.
var (
	errBareCR            = &Error{400, "bare CR in request head"}
	errMixedLineEnds     = &Error{400, "bare LF and CRLF line ends mixed in one head"}
	errControlInLine     = &Error{400, "control character in request line"}
	errControlInField    = &Error{400, "control character in header field"}
	errMethod            = &Error{400, "invalid method"}
	errTarget            = &Error{400, "invalid request-target"}
	errAsterisk          = &Error{400, "asterisk-form target outside OPTIONS"}
	errAuthority         = &Error{400, "CONNECT needs an authority-form target"}
	errVersion           = &Error{400, "malformed HTTP version"}
	errVersionNotSupp    = &Error{505, "HTTP version not supported"}
	errLeadingWhitespace = &Error{400, "whitespace before a header field (obs-fold)"}
	errFieldName         = &Error{400, "invalid header field name"}
	errSpaceBeforeColon  = &Error{400, "whitespace between header field name and colon"}
	errLineTooLong       = &Error{414, "request line too long"}
	errHeadTooLarge      = &Error{431, "request header fields too large"}
	errTooManyFields     = &Error{431, "too many header fields"}
	errContentLength     = &Error{400, "invalid Content-Length"}
	errContentLengths    = &Error{400, "conflicting Content-Length fields"}
	errTEAndCL           = &Error{400, "Transfer-Encoding together with Content-Length"}
	errTEOnHTTP10        = &Error{400, "Transfer-Encoding in an HTTP/1.0 request"}
	errTENotChunked      = &Error{400, "final transfer coding is not chunked"}
	errTEChunkedTwice    = &Error{400, "chunked transfer coding applied twice"}
	errTEUnsupported     = &Error{501, "unsupported transfer coding"}
	errNoHost            = &Error{400, "missing Host header field"}
	errManyHosts         = &Error{400, "more than one Host header field"}
	errHost              = &Error{400, "invalid Host header field"}
	errExpectation       = &Error{417, "unsupported expectation"}
)

// Parser reads request heads. Its zero value uses DefaultLimits. It keeps
// how far it got in a head split across reads, so a head that arrives a
// byte at a time is still scanned once: call Parse with the same Request
// and a buffer holding the same start plus the new bytes.
type Parser struct {
	Limits Limits

	started   bool // a head is in progress: r holds its request line
	inHeaders bool // the request line is done
	bareLF    bool // the request line ended in a bare LF
	line      int  // start of the line being parsed
	scan      int  // where the search for that line's end resumes
}

// Reset abandons a head in progress.
func (p *Parser) Reset() {
	limits := p.Limits
	*p = Parser{Limits: limits}
}

// Parse parses one request head from the front of buf. On success it
// returns the number of bytes the head used (r.HeadLength) and resets
// itself for the next request, which may already follow in buf
// (pipelining, RFC 9112 §9.3). Otherwise it returns ErrIncomplete or an
// *Error; after an *Error the connection must close.
func (p *Parser) Parse(buf []byte, r *Request) (int, error) {
	if !p.started {
		r.reset(buf)
		p.started = true
	} else {
		r.Header.buf = buf
	}
	maxHead, maxFields := p.Limits.MaxHeadBytes, p.Limits.MaxFields
	if maxHead <= 0 {
		maxHead = DefaultLimits.MaxHeadBytes
	}
	if maxFields <= 0 {
		maxFields = DefaultLimits.MaxFields
	}
	// The resume point lives in locals while the loop runs and goes back
	// into the Parser only when the head is incomplete.
	line, scan := p.line, p.scan
	for {
		end, next, err := findLineEnd(buf, scan, p.inHeaders)
		if err != nil {
			p.Reset()
			return 0, err
		}
		if next == 0 {
			if len(buf) > maxHead {
				return 0, p.tooLarge()
			}
			p.line, p.scan = line, end
			return 0, ErrIncomplete
		}
		if next > maxHead {
			return 0, p.tooLarge()
		}
		start := line
		line, scan = next, next
		if !p.inHeaders {
			if end == start {
				// RFC 9112 §2.2: a server SHOULD ignore at least one empty
				// line received before the request-line.
				continue
			}
			if err := r.parseRequestLine(buf, start, end); err != nil {
				p.Reset()
				return 0, err
			}
			p.inHeaders, p.bareLF = true, next == end+1
			continue
		}
		if p.bareLF != (next == end+1) {
			// RFC 9112 §2.2 lets a bare LF end a line, but a head that
			// mixes it with CRLF is how a field is smuggled past a proxy
			// that reads the bare LF as part of a value: refuse the mix.
			p.Reset()
			return 0, errMixedLineEnds
		}
		if end == start {
			p.Reset()
			r.HeadLength = next
			if err := r.finish(); err != nil {
				return 0, err
			}
			return next, nil
		}
		if len(r.Header.fields) == maxFields {
			p.Reset()
			return 0, errTooManyFields
		}
		if err := r.parseFieldLine(buf, start, end); err != nil {
			p.Reset()
			return 0, err
		}
	}
}

// tooLarge ends a head that outgrew MaxHeadBytes: 414 while the request
// line is still being read, 431 after it.
func (p *Parser) tooLarge() *Error {
	inRequestLine := !p.inHeaders
	p.Reset()
	if inRequestLine {
		return errLineTooLong
	}
	return errHeadTooLarge
}

// findLineEnd finds the end of the line whose unsearched part starts at
// i. It returns the index of the line's terminator and of the next line's
// start; next is 0 when buf ends first, and then end is where the search
// resumes. Every CTL on the way is checked here, so the line is validated
// in the same pass that finds its end.
func findLineEnd(buf []byte, i int, inHeaders bool) (end, next int, err *Error) {
	for i = scanControl(buf, i); ; i = scanControl(buf, i+1) {
		if i == len(buf) {
			return i, 0, nil
		}
		switch buf[i] {
		case '\t':
			if !inHeaders {
				return 0, 0, errControlInLine
			}
			// HTAB is whitespace inside a field line (RFC 9110 §5.5).
		case '\r':
			if i+1 == len(buf) {
				return i, 0, nil
			}
			if buf[i+1] != '\n' {
				// RFC 9112 §2.2: a bare CR must be rejected or replaced
				// by SP; replacing would hide a smuggling attempt.
				return 0, 0, errBareCR
			}
			return i, i + 2, nil
		case '\n':
			// RFC 9112 §2.2: a recipient MAY take a bare LF as a line
			// terminator. It ends this line; it never joins two.
			return i, i + 1, nil
		default:
			if !inHeaders {
				return 0, 0, errControlInLine
			}
			return 0, 0, errControlInField
		}
	}
}

func (r *Request) reset(buf []byte) {
	fields := r.Header.fields
	*r = Request{ContentLength: -1}
	r.Header.fields = fields
	r.Header.Reset(buf)
}

// parseRequestLine parses buf[start:end], RFC 9112 §3:
// method SP request-target SP HTTP-version, exactly one SP between them.
func (r *Request) parseRequestLine(buf []byte, start, end int) error {
	methodEnd := scanToken(buf, start)
	if methodEnd == start || methodEnd >= end || buf[methodEnd] != ' ' {
		return errMethod
	}
	targetStart := methodEnd + 1
	targetEnd := scanTarget(buf, targetStart)
	if targetEnd == targetStart || targetEnd >= end || buf[targetEnd] != ' ' {
		return errTarget
	}
	r.Method = Span{uint32(start), uint32(methodEnd)}
	r.Target = Span{uint32(targetStart), uint32(targetEnd)}
	if err := r.parseVersion(buf[targetEnd+1 : end]); err != nil {
		return err
	}
	return r.splitTarget(buf)
}

// parseVersion accepts HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112
// §2.3; the name is case-sensitive). A later 1.x minor version is served
// as 1.1 (RFC 9110 §2.5); any other major version gets 505.
func (r *Request) parseVersion(v []byte) error {
	if len(v) != 8 || string(v[:5]) != "HTTP/" || v[6] != '.' ||
		!isDigit(v[5]) || !isDigit(v[7]) {
		return errVersion
	}
	if v[5] != '1' {
		return errVersionNotSupp
	}
	r.Version = Version11
	if v[7] == '0' {
		r.Version = Version10
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseFieldLine parses buf[start:end] as field-name ":" OWS field-value
// OWS (RFC 9112 §5). CTLs were refused while the line end was found.
func (r *Request) parseFieldLine(buf []byte, start, end int) error {
	if isSpace(buf[start]) {
		// RFC 9112 §5.2: obs-fold (or whitespace after the request line,
		// §2.2) must be rejected with 400 or unfolded; we reject.
		return errLeadingWhitespace
	}
	nameEnd := scanToken(buf, start)
	if nameEnd == end || buf[nameEnd] != ':' {
		if nameEnd < end && isSpace(buf[nameEnd]) {
			// RFC 9112 §5.1: no whitespace between name and colon.
			return errSpaceBeforeColon
		}
		return errFieldName
	}
	if nameEnd == start {
		return errFieldName
	}
	valueStart, valueEnd := nameEnd+1, end
	for valueStart < valueEnd && isSpace(buf[valueStart]) {
		valueStart++
	}
	for valueEnd > valueStart && isSpace(buf[valueEnd-1]) {
		valueEnd--
	}
	r.Header.add(Span{uint32(start), uint32(nameEnd)}, Span{uint32(valueStart), uint32(valueEnd)})
	return nil
}
