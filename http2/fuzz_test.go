package http2

import (
	"testing"
)

// FuzzConn feeds arbitrary bytes after the preface and a SETTINGS frame,
// cut at an arbitrary point, with a handler that answers every request:
// the Conn must not panic, and its counts must stay consistent.
func FuzzConn(f *testing.F) {
	settings := appendSettings(nil)
	f.Add([]byte{0, 0, 0, 4, 1, 0, 0, 0, 0}, 3)
	f.Add(AppendFrameHeader(nil, 5, FramePriority, 0, 1), 0)
	f.Add(append(AppendFrameHeader(nil, 3, FrameHeaders, FlagEndHeaders|FlagEndStream, 1), 0x82, 0x86, 0x84), 5)
	f.Fuzz(func(t *testing.T, frames []byte, cut int) {
		input := append(append([]byte(Preface), settings...), frames...)
		h := &fuzzHandler{}
		c := NewConn(Config{MaxConcurrentStreams: 4}, h)
		h.conn = c
		if cut < 0 || cut > len(input) {
			cut = len(input)
		}
		n, err := c.Feed(input[:cut])
		if err == nil {
			var m int
			m, _ = c.Feed(input[n:])
			n += m
		}
		if n > len(input) || c.served < 0 || c.blocked < 0 || c.served > 4 {
			t.Fatalf("used %d of %d; served %d, blocked %d", n, len(input), c.served, c.blocked)
		}
		c.Close()
	})
}

type fuzzHandler struct {
	conn *Conn
}

func (h *fuzzHandler) Request(s *Stream) {
	h.conn.WriteHeaders(s, 200, nil, false)
	h.conn.WriteData(s, []byte("body"), true)
	h.conn.Done(s)
}
func (h *fuzzHandler) Data(s *Stream, p []byte, end bool) { h.conn.Consumed(s, len(p)) }
func (h *fuzzHandler) Reset(s *Stream, code ErrCode)      {}
func (h *fuzzHandler) WindowOpened(s *Stream)             {}
func (h *fuzzHandler) Malformed(uint32, string)           {}
