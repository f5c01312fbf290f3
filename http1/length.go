package http1

// LengthReader frames a body of known length (Content-Length, RFC 9112
// §6.2) the way ChunkedDecoder frames a chunked one, so the loop streams
// both through the same shape of call.
type LengthReader struct {
	// Remaining is how many body bytes are still to come.
	Remaining int64
}

// Take returns the body bytes at the front of in (a sub-slice, no copy)
// and whether the body is complete. What follows them in in belongs to
// the next message.
func (r *LengthReader) Take(in []byte) (data []byte, done bool) {
	n := int64(len(in))
	if n > r.Remaining {
		n = max(r.Remaining, 0)
	}
	r.Remaining -= n
	return in[:n:n], r.Remaining <= 0
}
