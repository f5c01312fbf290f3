package server

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"os"
	"strconv"
	"strings"

	"github.com/m0serve/m0serve/loop"
)

// Limits on a Range field's ranges (RFC 9110 §14.2 lets a server ignore
// or refuse what looks like abuse: many small or overlapping ranges make
// a small file a large answer, and each part costs a header).
const (
	// maxRanges: more ranges than this and the whole file is sent.
	maxRanges = 32
	// rangeGap: ranges in order with at most this many bytes between
	// them become one part, less than a part's header costs.
	rangeGap = 80
)

// byteRange is one range of a file: length bytes from start.
type byteRange struct {
	start, length int64
}

func (r byteRange) contentRange(size int64) string {
	return fmt.Sprintf("bytes %d-%d/%d", r.start, r.start+r.length-1, size)
}

// parseRanges reads a Range field ("bytes=0-99,200-,-50") against size,
// coalescing what overlaps or nearly touches its predecessor; the parts
// keep the client's order otherwise (RFC 9110 §14.6). ok is false where
// the field is to be ignored and the whole file sent: not bytes, a
// malformed spec, more than maxRanges, or parts that would add up to more
// than the file. ok with no ranges: none is satisfiable (416).
func parseRanges(header string, size int64) (ranges []byteRange, ok bool) {
	specs, found := strings.CutPrefix(header, "bytes=")
	if !found {
		return nil, false
	}
	items := strings.Split(specs, ",")
	if len(items) > maxRanges {
		return nil, false
	}
	total := int64(0)
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue // RFC 9110 §5.6.1: empty list elements are allowed
		}
		r, satisfiable, ok := parseRangeSpec(item, size)
		if !ok {
			return nil, false
		}
		if !satisfiable {
			continue
		}
		if n := len(ranges); n > 0 && coalesce(&ranges[n-1], r) {
			continue
		}
		ranges = append(ranges, r)
	}
	for _, r := range ranges {
		total += r.length
	}
	if total > size {
		return nil, false
	}
	return ranges, true
}

// parseRangeSpec reads one range: "first-last", "first-" or "-suffix".
func parseRangeSpec(spec string, size int64) (r byteRange, satisfiable, ok bool) {
	first, last, found := strings.Cut(spec, "-")
	if !found {
		return r, false, false
	}
	if first == "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return r, false, false
		}
		if n == 0 || size == 0 {
			return r, false, true
		}
		start := max(0, size-n)
		return byteRange{start, size - start}, true, true
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return r, false, false
	}
	end := size - 1
	if last != "" {
		if end, err = strconv.ParseInt(last, 10, 64); err != nil || end < start {
			return r, false, false
		}
		end = min(end, size-1)
	}
	if start >= size {
		return r, false, true
	}
	return byteRange{start, end - start + 1}, true, true
}

// coalesce merges next into prev when it starts inside prev or at most
// rangeGap bytes after it.
func coalesce(prev *byteRange, next byteRange) bool {
	prevEnd := prev.start + prev.length
	if next.start < prev.start || next.start > prevEnd+rangeGap {
		return false
	}
	prev.length = max(prevEnd, next.start+next.length) - prev.start
	return true
}

// sendRanges answers 206 with the ranges as multipart/byteranges parts
// (RFC 9110 §14.6), formatted by mime/multipart. The parts are copied
// through here, not spliced: the loop's zero-copy send is one span of
// one file per response.
func (s *staticFiles) sendRanges(j *loop.Job, lg *staticLog, file *os.File, ranges []byteRange, kind string, size int64) {
	defer file.Close()
	// The length is the parts' headers, counted by writing them without
	// their bytes, and the bytes (net/http's way).
	counter := &countingWriter{}
	parts := multipart.NewWriter(counter)
	for _, r := range ranges {
		parts.CreatePart(partHeader(r, kind, size))
	}
	parts.Close()
	length := counter.n
	for _, r := range ranges {
		length += r.length
	}
	j.SetHeader("Content-Type", "multipart/byteranges; boundary="+parts.Boundary())
	if err := j.WriteHeader(206, length); err != nil {
		j.Abort()
		return
	}
	sent := length
	if j.Request.MethodIs("HEAD") {
		s.logAccess(lg, j, 206, 0)
		j.Finish()
		return
	}
	out := multipart.NewWriter(j)
	out.SetBoundary(parts.Boundary())
	for _, r := range ranges {
		part, err := out.CreatePart(partHeader(r, kind, size))
		if err == nil {
			var n int64
			n, err = io.Copy(part, io.NewSectionReader(file, r.start, r.length))
			if err == nil && n < r.length {
				err = io.ErrUnexpectedEOF
			}
		}
		if err != nil {
			// A short file (truncated meanwhile) or a client gone: the
			// announced length cannot be kept.
			j.Abort()
			return
		}
	}
	if err := out.Close(); err != nil {
		j.Abort()
		return
	}
	s.logAccess(lg, j, 206, sent)
	j.Finish()
}

func partHeader(r byteRange, kind string, size int64) textproto.MIMEHeader {
	return textproto.MIMEHeader{
		"Content-Range": {r.contentRange(size)},
		"Content-Type":  {kind},
	}
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
