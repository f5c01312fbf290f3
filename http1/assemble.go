package http1

// Assembler builds a Request from a head that arrives as separate parts
// rather than as text: an HTTP/2 stream's, whose pseudo-headers and
// fields HPACK has already split (RFC 9113 §8.3.1). Each part is checked
// as it is added, by the tables Parse uses, and copied into Buf, which
// the Request's spans index; nothing is parsed from text, so no part can
// be read as more than it was checked to be. What the parser's finishing
// rules enforce (one Content-Length, the Host field, Expect) holds too.
// The first failure sticks: later calls do nothing and Finish returns it.
type Assembler struct {
	// Limits.MaxFields applies; MaxHeadBytes does not (the protocol the
	// parts came by bounds them).
	Limits Limits
	// Buf holds the head's bytes: method, target, then each field's name
	// and value, back to back.
	Buf []byte
	r   *Request
	err error
}

// Start begins r with its method and request-target. The target must be
// origin-form, or asterisk-form for OPTIONS.
func (a *Assembler) Start(r *Request, method, target string) {
	a.r, a.err = r, nil
	a.Buf = a.Buf[:0]
	r.reset(nil)
	a.Buf = append(a.Buf, method...)
	r.Method = Span{0, uint32(len(a.Buf))}
	a.Buf = append(a.Buf, target...)
	r.Target = Span{r.Method.End, uint32(len(a.Buf))}
	r.Header.buf = a.Buf
	switch {
	case len(method) == 0 || scanToken(a.Buf, 0) < int(r.Method.End):
		a.err = errMethod
	case len(target) == 0 || scanTarget(a.Buf, int(r.Target.Start)) < len(a.Buf):
		a.err = errTarget
	default:
		if err := r.splitTarget(a.Buf); err != nil {
			a.err = err
		} else if r.Form != FormOrigin && r.Form != FormAsterisk {
			a.err = errTarget
		}
	}
}

// Field adds a header field.
func (a *Assembler) Field(name, value string) { addField(a, name, value) }

// FieldBytes adds a header field whose value is in a byte slice (one
// made by joining others, such as HTTP/2's cookies, §8.2.3).
func (a *Assembler) FieldBytes(name string, value []byte) { addField(a, name, value) }

func addField[T string | []byte](a *Assembler, name string, value T) {
	if a.err != nil {
		return
	}
	maxFields := a.Limits.MaxFields
	if maxFields <= 0 {
		maxFields = DefaultLimits.MaxFields
	}
	r := a.r
	if len(r.Header.fields) == maxFields {
		a.err = errTooManyFields
		return
	}
	nameStart := len(a.Buf)
	a.Buf = append(a.Buf, name...)
	valueStart := len(a.Buf)
	a.Buf = append(a.Buf, value...)
	if !ValidFieldName(a.Buf[nameStart:valueStart]) {
		a.err = errFieldName
		return
	}
	if !ValidFieldValue(a.Buf[valueStart:]) {
		a.err = errControlInField
		return
	}
	r.Header.buf = a.Buf
	r.Header.add(Span{uint32(nameStart), uint32(valueStart)}, Span{uint32(valueStart), uint32(len(a.Buf))})
}

// Finish applies the rules the parser applies once a head is complete
// (finish: Content-Length, Host, Expect), with HTTP/1.1's semantics where
// versions differ, and marks r as version v. It returns the first
// failure of any part, an *Error.
func (a *Assembler) Finish(v Version) error {
	r := a.r
	r.Header.buf = a.Buf
	r.HeadLength = len(a.Buf)
	if a.err != nil {
		return a.err
	}
	r.Version = Version11
	err := r.finish()
	r.Version = v
	return err
}
