package http1

// The rest of a chunk-size line after its digits, RFC 9112 §7.1.1:
//
//	chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//	chunk-ext-name = token
//	chunk-ext-val  = token / quoted-string
//
// Extensions carry nothing the server uses, so they are checked and
// dropped, never stored. They are checked rather than skipped because
// parsers that skip differently ("5;\r\n", "5 \r\n", a quoted ';' or CR)
// disagree about where a chunk starts, and that disagreement between a
// proxy and a server is request smuggling; gunicorn and strict llhttp
// refuse the same inputs.

// sizeLineByte takes one byte of a chunk-size line after the digits and
// moves the decoder along the grammar; a CR where the line may end moves
// it to stateSizeLF.
func (d *ChunkedDecoder) sizeLineByte(c byte) error {
	if c == '\n' {
		return errChunkBareLF // RFC 9112 §7.1 (and erratum 7633): CRLF only
	}
	space := c == ' ' || c == '\t'
	switch d.state {
	case stateAfterSize:
		switch {
		case c == '\r':
			d.state = stateSizeLF
		case c == ';':
			d.state = stateExtBeforeName
		case space:
			d.state = stateSizeSpace
		default:
			return errChunkSize
		}
	case stateSizeSpace:
		switch {
		case c == ';':
			d.state = stateExtBeforeName
		case space:
		case c == '\r':
			// BWS belongs to a following ';'; the grammar has no
			// whitespace at the end of the line.
			return errChunkSizeSpace
		default:
			return errChunkSize
		}
	case stateExtBeforeName:
		switch {
		case isToken(c):
			d.state = stateExtName
		case space:
		default:
			return errChunkExtension // the name is not optional
		}
	case stateExtName:
		switch {
		case isToken(c):
		case c == '\r':
			d.state = stateSizeLF
		default:
			return d.afterExtensionPart(c, space, stateExtAfterName)
		}
	case stateExtAfterName:
		switch {
		case space:
		case c == '=':
			d.state = stateExtBeforeValue
		case c == ';':
			d.state = stateExtBeforeName
		default:
			return errChunkExtension
		}
	case stateExtBeforeValue:
		switch {
		case isToken(c):
			d.state = stateExtValue
		case c == '"':
			d.state = stateExtQuoted
		case space:
		default:
			return errChunkExtension
		}
	case stateExtValue:
		switch {
		case isToken(c):
		case c == '\r':
			d.state = stateSizeLF
		default:
			return d.afterExtensionPart(c, space, stateExtAfterValue)
		}
	case stateExtQuoted:
		// qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
		// (RFC 9110 §5.6.4): no CTL, so no CR can hide in a value.
		switch {
		case c == '"':
			d.state = stateExtValueEnd
		case c == '\\':
			d.state = stateExtQuotedPair
		case space || (c > 0x20 && c != 0x7F):
		default:
			return errChunkExtension
		}
	case stateExtQuotedPair:
		// quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
		if !space && (c <= 0x20 || c == 0x7F) {
			return errChunkExtension
		}
		d.state = stateExtQuoted
	case stateExtValueEnd:
		if c == '\r' {
			d.state = stateSizeLF
			return nil
		}
		return d.afterExtensionPart(c, space, stateExtAfterValue)
	case stateExtAfterValue:
		switch {
		case space:
		case c == ';':
			d.state = stateExtBeforeName
		default:
			return errChunkExtension
		}
	}
	return nil
}

// afterExtensionPart takes the byte after a name or value: ';' starts
// the next extension, BWS moves to whitespaceState, and a name may be
// followed by '='.
func (d *ChunkedDecoder) afterExtensionPart(c byte, space bool, whitespaceState chunkState) error {
	switch {
	case c == ';':
		d.state = stateExtBeforeName
	case space:
		d.state = whitespaceState
	case c == '=' && d.state == stateExtName:
		d.state = stateExtBeforeValue
	default:
		return errChunkExtension
	}
	return nil
}
