package ws

import (
	"errors"
	"io"

	"github.com/klauspost/compress/flate"
)

// MinCompress is the smallest payload AppendMessage compresses: below it
// the deflate block overhead and the CPU cost outweigh the saving.
const MinCompress = 512

// deflateTail ends every compressed message on the wire: the empty stored
// block of a sync flush, which the sender removes (RFC 7692 §7.2.1) and
// the receiver puts back (§7.2.2).
var deflateTail = [4]byte{0x00, 0x00, 0xff, 0xff}

// inflateEnd is the removed tail followed by an empty final stored block,
// so the inflater sees a whole deflate stream and ends with io.EOF.
var inflateEnd = [...]byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// Inflater decompresses whole messages of a permessage-deflate connection
// on which the client keeps no context between messages
// (client_no_context_takeover, which the server always imposes, RFC 7692
// §7.1.1.2): each message inflates on its own, so one Inflater (its
// window and tables, about 42 KiB) serves every connection of a thread
// instead of one per connection. It is not safe for concurrent use.
type Inflater struct {
	reader io.ReadCloser // a flate decompressor; also a flate.Resetter
	src    messageSource
}

// NewInflater returns an Inflater.
func NewInflater() *Inflater {
	f := &Inflater{}
	f.reader = flate.NewReader(&f.src)
	return f
}

// Inflate appends the decompressed form of the message payload src (with
// its tail removed, as sent) to dst. Beyond limit bytes of output (0: no
// limit) it stops with ErrMessageTooBig, so a small message that inflates
// to a huge one costs at most limit bytes; a payload that is not deflate
// data is ErrInflate.
func (f *Inflater) Inflate(dst, src []byte, limit int64) ([]byte, error) {
	f.src = messageSource{payload: src}
	if err := f.reader.(flate.Resetter).Reset(&f.src, nil); err != nil {
		return dst, ErrInflate
	}
	start := len(dst)
	for {
		if cap(dst)-len(dst) < 512 {
			// Double what is inflated so far: growing by a step of the
			// compressed size copied and dropped 80 MiB to inflate one
			// 16 MiB message from 16 KB of zeros.
			grow := max(len(src)*2, 4096, len(dst)-start)
			if limit > 0 {
				// No more room than the limit can use.
				grow = int(min(int64(grow), max(limit-int64(len(dst)-start)+1, 512)))
			}
			dst = append(dst[:cap(dst)], make([]byte, grow)...)[:len(dst)]
		}
		room := dst[len(dst):cap(dst)]
		if limit > 0 {
			if over := int64(len(dst)-start) + int64(len(room)) - limit; over > 0 {
				// Read at most one byte past the limit, to know it was passed.
				room = room[:int64(len(room))-over+1]
			}
		}
		n, err := f.reader.Read(room)
		dst = dst[:len(dst)+n]
		if limit > 0 && int64(len(dst)-start) > limit {
			return dst[:start], ErrMessageTooBig
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], ErrInflate
		}
	}
}

// messageSource reads a message payload and then inflateEnd. It is a
// flate.Reader (it has ReadByte), so the decompressor reads it directly
// instead of wrapping it in a bufio.Reader per message.
type messageSource struct {
	payload []byte
	end     int // bytes of inflateEnd already read
}

func (s *messageSource) Read(p []byte) (int, error) {
	if len(s.payload) > 0 {
		n := copy(p, s.payload)
		s.payload = s.payload[n:]
		return n, nil
	}
	if s.end == len(inflateEnd) {
		return 0, io.EOF
	}
	n := copy(p, inflateEnd[s.end:])
	s.end += n
	return n, nil
}

func (s *messageSource) ReadByte() (byte, error) {
	if len(s.payload) > 0 {
		b := s.payload[0]
		s.payload = s.payload[1:]
		return b, nil
	}
	if s.end == len(inflateEnd) {
		return 0, io.EOF
	}
	b := inflateEnd[s.end]
	s.end++
	return b, nil
}

// Deflater compresses whole messages with no context kept between them
// (server_no_context_takeover, which the server always imposes): it holds
// no window, so one Deflater serves every connection of a thread. It is
// not safe for concurrent use.
type Deflater struct {
	out appendWriter
}

// errDeflateTail is a bug: a sync-flushed stream always ends with the tail.
var errDeflateTail = errors.New("websocket: deflate output lacks the sync flush tail")

// Deflate appends the compressed form of src to dst, without the sync
// flush tail (RFC 7692 §7.2.1), ready to be a message payload.
func (d *Deflater) Deflate(dst, src []byte) ([]byte, error) {
	d.out.buf = dst
	err := flate.StatelessDeflate(&d.out, src, false, nil)
	dst, d.out.buf = d.out.buf, nil
	if err != nil {
		return dst, err
	}
	n := len(dst)
	if n < 4 || [4]byte(dst[n-4:]) != deflateTail {
		return dst, errDeflateTail
	}
	return dst[:n-4], nil
}

type appendWriter struct{ buf []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// AppendMessage appends a whole data message as one unmasked frame to dst.
// With a Deflater (permessage-deflate negotiated), a payload of at least
// MinCompress bytes is sent compressed, with RSV1, unless compression does
// not make it smaller.
func AppendMessage(dst []byte, op Opcode, payload []byte, d *Deflater) []byte {
	if d == nil || len(payload) < MinCompress {
		return AppendFrame(dst, op, true, payload)
	}
	// Compress after room for the longest header, then slide the result
	// back to the header's actual length.
	at := len(dst)
	room := HeaderLen(int64(len(payload)))
	dst = append(dst, make([]byte, room)...)
	out, err := d.Deflate(dst, payload)
	n := len(out) - at - room
	if err != nil || n >= len(payload) {
		return AppendFrame(out[:at], op, true, payload)
	}
	h := HeaderLen(int64(n))
	copy(out[at+h:], out[at+room:])
	AppendHeader(out[:at], op, true, true, int64(n))
	return out[:at+h+n]
}
