package http1

// finish applies the rules that need the whole field section: message
// framing (RFC 9112 §6), Host (§3.2), Connection (RFC 9110 §7.6.1) and
// Expect (RFC 9110 §10.1.1). Each field was classified once when it was
// added, so this is one walk over the fields with a switch.
func (r *Request) finish() error {
	var (
		hosts                    int
		sawLength, sawTE         bool
		chunkedLast, chunkedSeen bool
		otherCoding              bool
		optClose, optKeepAlive   bool
		optUpgrade, hasUpgrade   bool
	)
	h := &r.Header
	for i := range h.fields {
		f := &h.fields[i]
		value := f.Value.In(h.buf)
		switch f.Known {
		case HeaderContentLength:
			n, ok := parseContentLength(value)
			if !ok {
				return errContentLength
			}
			// RFC 9110 §8.6: repeated fields with one value may be
			// accepted; differing ones are an unrecoverable error.
			if sawLength && n != r.ContentLength {
				return errContentLengths
			}
			sawLength, r.ContentLength = true, n
		case HeaderTransferEncoding:
			sawTE = true
			for rest := value; len(rest) > 0; {
				var coding []byte
				coding, rest = nextListElement(rest)
				if len(coding) == 0 {
					continue
				}
				if equalFold(coding, "chunked") {
					// RFC 9112 §6.1: chunked must not be applied twice.
					if chunkedSeen {
						return errTEChunkedTwice
					}
					chunkedSeen, chunkedLast = true, true
				} else {
					otherCoding, chunkedLast = true, false
				}
			}
		case HeaderHost:
			hosts++
			if !isHost(value, r.Form == FormAbsolute || r.Form == FormAuthority) {
				return errHost
			}
		case HeaderConnection:
			for rest := value; len(rest) > 0; {
				var option []byte
				option, rest = nextListElement(rest)
				switch {
				case equalFold(option, "close"):
					optClose = true
				case equalFold(option, "keep-alive"):
					optKeepAlive = true
				case equalFold(option, "upgrade"):
					optUpgrade = true
				}
			}
		case HeaderExpect:
			if !equalFold(value, "100-continue") {
				return errExpectation
			}
			// RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0
			// request MUST be ignored.
			r.Expect100 = r.Version == Version11
		case HeaderUpgrade:
			hasUpgrade = true
		}
	}

	if sawTE {
		switch {
		case r.Version == Version10:
			// RFC 9112 §6.1: the framing of an HTTP/1.0 message with
			// Transfer-Encoding is faulty.
			return errTEOnHTTP10
		case sawLength:
			// RFC 9112 §6.1: such a message "ought to be handled as an
			// error"; it is the classic request-smuggling shape.
			return errTEAndCL
		case !chunkedLast:
			// RFC 9112 §6.3: a request whose final coding is not chunked
			// has no determinable length: 400 and close.
			return errTENotChunked
		case otherCoding:
			// RFC 9112 §6.1: a server that does not understand a
			// transfer coding SHOULD answer 501.
			return errTEUnsupported
		}
		r.Chunked = true
	}

	// RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request
	// without Host, and to any request with more than one.
	if hosts > 1 {
		return errManyHosts
	}
	if hosts == 0 && r.Version == Version11 {
		return errNoHost
	}
	if r.Form == FormAbsolute && hosts == 1 {
		// RFC 9112 §3.2.2: the target's authority wins over Host. The
		// field is pointed at it, so whoever reads Host (the environ's
		// HTTP_HOST, the ASGI headers) sees the host the request is for.
		h.fields[h.known[HeaderHost]-1].Value = r.Authority
	}

	// RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 persists
	// only when the client asked for it.
	if r.Version == Version11 {
		r.KeepAlive = !optClose
	} else {
		r.KeepAlive = optKeepAlive && !optClose
	}
	r.Upgrade = optUpgrade && hasUpgrade
	return nil
}

// parseContentLength accepts 1*DIGIT (RFC 9110 §8.6) that fits an int64.
func parseContentLength(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// nextListElement splits the first element off a comma-separated list
// (RFC 9110 §5.6.1), with its surrounding whitespace removed.
func nextListElement(list []byte) (element, rest []byte) {
	i := 0
	for i < len(list) && list[i] != ',' {
		i++
	}
	element, rest = list[:i], list[i:]
	if len(rest) > 0 {
		rest = rest[1:]
	}
	for len(element) > 0 && isSpace(element[0]) {
		element = element[1:]
	}
	for len(element) > 0 && isSpace(element[len(element)-1]) {
		element = element[:len(element)-1]
	}
	return element, rest
}
