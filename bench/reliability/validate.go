package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Verdict is what validateResponses made of the bytes a connection
// received.
type Verdict struct {
	// Responses are the complete responses, interim (1xx) ones included;
	// Statuses their codes in order.
	Responses int
	Statuses  []int
	// Incomplete: the bytes end inside a response on a connection that is
	// still open, cut by the client's own wait, not by the server.
	Incomplete bool
	// Invalid is why the bytes are not HTTP/1.x responses ("" when they
	// are).
	Invalid string
	// Upgraded: a 101 ended HTTP on the connection; what follows was not
	// checked.
	Upgraded bool
}

// validateResponses checks that data, everything a server sent on one
// connection, is a sequence of HTTP/1.0 or HTTP/1.1 responses: a status
// line with a code from 100 to 599, header fields that are token ":"
// value, and bodies framed by chunked coding, Content-Length or the close
// (RFC 9112 §4, §5, §6.3). closed says the server ended the connection
// (EOF or reset) rather than the client giving up waiting. No request was
// HEAD, so every 2xx-5xx but 204 and 304 has a body by its framing.
func validateResponses(data []byte, closed bool) Verdict {
	var v Verdict
	for len(data) > 0 {
		end := bytes.Index(data, []byte("\r\n\r\n"))
		if end < 0 {
			if !bytes.HasPrefix(data, []byte("HTTP/1.")[:min(len(data), 7)]) {
				v.Invalid = fmt.Sprintf("not a status line: %.40q", data)
			} else if closed {
				v.Invalid = fmt.Sprintf("head cut by the close: %.60q", data)
			} else {
				v.Incomplete = true
			}
			return v
		}
		status, framing, length, why := parseHead(string(data[:end+2]))
		if why != "" {
			v.Invalid = why
			return v
		}
		data = data[end+4:]
		v.Responses++
		v.Statuses = append(v.Statuses, status)
		switch {
		case status == 101:
			v.Upgraded = true
			return v
		case status < 200 || status == 204 || status == 304:
			// No body.
		case framing == "chunked":
			n, why := chunkedLength(data)
			if why != "" {
				v.Invalid = why
				return v
			}
			if n < 0 {
				if closed {
					v.Invalid = "chunked body cut by the close"
				} else {
					v.Incomplete = true
				}
				return v
			}
			data = data[n:]
		case framing == "length":
			if int64(len(data)) < length {
				if closed {
					v.Invalid = fmt.Sprintf("body of %d bytes cut at %d by the close", length, len(data))
				} else {
					v.Incomplete = true
				}
				return v
			}
			data = data[length:]
		default:
			// Delimited by the close: everything else is this body.
			if !closed {
				v.Incomplete = true
			}
			return v
		}
	}
	return v
}

// parseHead checks a response head (status line and fields, each ending
// in CRLF) and says how its body is framed: "chunked", "length" (with the
// length) or "close".
func parseHead(head string) (status int, framing string, length int64, invalid string) {
	lines := strings.Split(strings.TrimSuffix(head, "\r\n"), "\r\n")
	line := lines[0]
	if !strings.HasPrefix(line, "HTTP/1.1 ") && !strings.HasPrefix(line, "HTTP/1.0 ") {
		return 0, "", 0, fmt.Sprintf("status line %.60q", line)
	}
	code := line[9:]
	if len(code) > 3 && code[3] != ' ' || len(code) < 3 {
		return 0, "", 0, fmt.Sprintf("status line %.60q", line)
	}
	status, err := strconv.Atoi(code[:3])
	if err != nil || status < 100 || status > 599 || strings.ContainsAny(code, "\r\n\x00") {
		return 0, "", 0, fmt.Sprintf("status line %.60q", line)
	}
	framing = "close"
	var lengths []string
	for _, field := range lines[1:] {
		name, value, ok := strings.Cut(field, ":")
		if !ok || !isToken(name) {
			return 0, "", 0, fmt.Sprintf("header field %.60q", field)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return 0, "", 0, fmt.Sprintf("header value %.60q", field)
		}
		value = strings.Trim(value, " \t")
		switch strings.ToLower(name) {
		case "transfer-encoding":
			codings := strings.Split(strings.ToLower(value), ",")
			if strings.TrimSpace(codings[len(codings)-1]) != "chunked" {
				return 0, "", 0, fmt.Sprintf("Transfer-Encoding %q without chunked last", value)
			}
			framing = "chunked"
		case "content-length":
			lengths = append(lengths, value)
		}
	}
	if len(lengths) > 0 {
		if framing == "chunked" {
			return 0, "", 0, "both Transfer-Encoding and Content-Length"
		}
		for _, l := range lengths {
			n, err := strconv.ParseInt(l, 10, 64)
			if err != nil || n < 0 || l != lengths[0] || l[0] == '+' {
				return 0, "", 0, fmt.Sprintf("Content-Length %q", strings.Join(lengths, ", "))
			}
			length = n
		}
		framing = "length"
	}
	return status, framing, length, ""
}

// chunkedLength is the size of the chunked body at the start of data,
// trailers included, or -1 when data ends inside it.
func chunkedLength(data []byte) (int, string) {
	at := 0
	for {
		eol := bytes.Index(data[at:], []byte("\r\n"))
		if eol < 0 {
			return -1, ""
		}
		sizeText, _, _ := strings.Cut(string(data[at:at+eol]), ";")
		size, err := strconv.ParseInt(strings.TrimRight(sizeText, " \t"), 16, 64)
		if err != nil || size < 0 || sizeText == "" || sizeText[0] == '+' || sizeText[0] == '-' {
			return 0, fmt.Sprintf("chunk size line %.40q", data[at:at+eol])
		}
		at += eol + 2
		if size == 0 {
			break
		}
		if int64(len(data)-at) < size+2 {
			return -1, ""
		}
		if !bytes.Equal(data[at+int(size):at+int(size)+2], []byte("\r\n")) {
			return 0, "chunk not followed by CRLF"
		}
		at += int(size) + 2
	}
	// Trailer fields, then the empty line.
	for {
		eol := bytes.Index(data[at:], []byte("\r\n"))
		if eol < 0 {
			return -1, ""
		}
		line := string(data[at : at+eol])
		at += eol + 2
		if line == "" {
			return at, ""
		}
		if name, _, ok := strings.Cut(line, ":"); !ok || !isToken(name) {
			return 0, fmt.Sprintf("trailer field %.40q", line)
		}
	}
}

// isToken reports whether s is an RFC 9110 token (a field name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}
