//go:build linux

package tests

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// utf8Vector is a payload of Markus Kuhn's UTF-8 decoder stress test, the
// source of Autobahn's group 6, with whether it is valid UTF-8.
type utf8Vector struct {
	group   string
	payload string
	valid   bool
}

// utf8Vectors: 6.6 the prefixes of "κόσμε", then 6.7-6.23.
func utf8Vectors() []utf8Vector {
	const kosme = "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"
	var v []utf8Vector
	add := func(group string, valid bool, payloads ...string) {
		for _, p := range payloads {
			v = append(v, utf8Vector{group, p, valid})
		}
	}
	for n := 1; n <= len(kosme); n++ {
		add("6.6", utf8.ValidString(kosme[:n]), kosme[:n])
	}
	add("6.7", true, "\x00", "\xc2\x80", "\xe0\xa0\x80", "\xf0\x90\x80\x80") // first of each length
	add("6.8", false, "\xf8\x88\x80\x80\x80", "\xfc\x84\x80\x80\x80\x80")    // 5 and 6 bytes
	add("6.9", true, "\x7f", "\xdf\xbf", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf") // last of each length
	add("6.10", false, "\xf7\xbf\xbf\xbf", "\xfb\xbf\xbf\xbf\xbf", "\xfd\xbf\xbf\xbf\xbf\xbf")
	add("6.11", true, "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf")
	add("6.11", false, "\xf4\x90\x80\x80") // U+110000
	var continuations strings.Builder
	for b := 0x80; b <= 0xbf; b++ {
		continuations.WriteByte(byte(b))
	}
	add("6.12", false, "\x80", "\xbf", "\x80\xbf", "\x80\xbf\x80", "\x80\xbf\x80\xbf", "\x80\xbf\x80\xbf\x80",
		"\x80\xbf\x80\xbf\x80\xbf", continuations.String())
	for _, r := range [][2]int{{0xc0, 0xdf}, {0xe0, 0xef}, {0xf0, 0xf7}, {0xf8, 0xfb}, {0xfc, 0xfd}} {
		var lonely strings.Builder
		for b := r[0]; b <= r[1]; b++ {
			lonely.WriteString(string([]byte{byte(b), ' '}))
		}
		add("6.13", false, lonely.String())
	}
	truncated := []string{"\xc0", "\xe0\x80", "\xf0\x80\x80", "\xf8\x80\x80\x80", "\xfc\x80\x80\x80\x80",
		"\xdf", "\xef\xbf", "\xf7\xbf\xbf", "\xfb\xbf\xbf\xbf", "\xfd\xbf\xbf\xbf\xbf"}
	add("6.14", false, truncated...)
	add("6.15", false, strings.Join(truncated, ""))
	add("6.16", false, "\xfe", "\xff", "\xfe\xfe\xff\xff")
	add("6.17", false, "\xc0\xaf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xf8\x80\x80\x80\xaf", "\xfc\x80\x80\x80\x80\xaf")
	add("6.18", false, "\xc1\xbf", "\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xf8\x87\xbf\xbf\xbf", "\xfc\x83\xbf\xbf\xbf\xbf")
	add("6.19", false, "\xc0\x80", "\xe0\x80\x80", "\xf0\x80\x80\x80", "\xf8\x80\x80\x80\x80", "\xfc\x80\x80\x80\x80\x80")
	add("6.20", false, "\xed\xa0\x80", "\xed\xad\xbf", "\xed\xae\x80", "\xed\xaf\xbf", "\xed\xb0\x80", "\xed\xbe\x80", "\xed\xbf\xbf")
	add("6.21", false, "\xed\xa0\x80\xed\xb0\x80", "\xed\xa0\x80\xed\xbf\xbf", "\xed\xad\xbf\xed\xb0\x80", "\xed\xad\xbf\xed\xbf\xbf",
		"\xed\xae\x80\xed\xb0\x80", "\xed\xae\x80\xed\xbf\xbf", "\xed\xaf\xbf\xed\xb0\x80", "\xed\xaf\xbf\xed\xbf\xbf")
	// Noncharacters are valid UTF-8: U+nFFFE and U+nFFFF of every plane,
	// and U+FDD0..U+FDEF.
	for plane := rune(0); plane <= 0x10; plane++ {
		add("6.22", true, string(plane<<16|0xfffe), string(plane<<16|0xffff))
	}
	add("6.22", true, "\ufdd0", "\ufdef")
	add("6.23", true, "\ufffd", "\ufffd\ufffd", "κόσμε\ufffd")
	return v
}

// 6: UTF-8 (§8.1): a text message that is not UTF-8 fails the connection
// with 1007, as soon as the first byte that cannot be valid arrives, even
// mid-frame; every valid one comes back, whole or split at every byte.
func utf8Cases() []confCase {
	const (
		kosme   = "κόσμε"
		latin   = "Hello-µ@ßöäüàá-UTF-8!!"
		invalid = "κόσμε\xed\xa0\x80edited" // a surrogate
	)
	invalidPayload := fail(1007)
	bytewise := func(s string) []confFrame {
		if s == "" {
			return []confFrame{textFrame("")}
		}
		var frames []confFrame
		for i := 0; i < len(s); i++ {
			op := opContinuation
			if i == 0 {
				op = opText
			}
			frames = append(frames, fragment(op, s[i:i+1], i == len(s)-1))
		}
		return frames
	}
	// failFast sends the first parts of an invalid message and wants the
	// failure without the rest.
	failFast := func(first ...func(c *confClient) error) func(c *confClient) error {
		return seq(append(first, func(c *confClient) error {
			// A bound on a failing case: the failure is expected at once.
			c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			return c.expectFailure(1007)
		})...)
	}
	// A text frame's header with the payload length n, and its bytes
	// masked with key 0 (allowed: the key is any 32 bits).
	unmaskedFrom := func(n int) []byte {
		if n <= 125 {
			return []byte{0x81, 0x80 | byte(n), 0, 0, 0, 0}
		}
		return []byte{0x81, 0x80 | 126, byte(n >> 8), byte(n), 0, 0, 0, 0}
	}
	raw := func(parts ...string) func(c *confClient) error {
		return func(c *confClient) error {
			for _, p := range parts {
				if err := c.writeRaw([]byte(p)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	ffFrame := kosme + "\xf4\x90\x80\x80" + "edited"
	cases := []confCase{
		{id: "6.1.1", about: "empty text", run: echo(opText, nil)},
		{id: "6.1.2", about: "empty text in three empty fragments", run: seq(send(fragment(opText, "", false), fragment(opContinuation, "", false), fragment(opContinuation, "", true)), want(opText, ""))},
		{id: "6.1.3", about: "text in three fragments, the first and last empty", run: seq(send(fragment(opText, "", false), fragment(opContinuation, "middle frame payload", false), fragment(opContinuation, "", true)), want(opText, "middle frame payload"))},
		{id: "6.2.1", about: "valid UTF-8 in one frame", run: echo(opText, []byte(latin))},
		{id: "6.2.2", about: "valid UTF-8 in two fragments split at a character", run: seq(send(fragment(opText, latin[:10], false), fragment(opContinuation, latin[10:], true)), want(opText, latin))},
		{id: "6.2.3", about: "valid UTF-8, one frame in 1-byte writes", run: seq(sendChopped(1, textFrame(latin)), want(opText, latin))},
		{id: "6.2.4", about: "valid UTF-8, a frame per byte", run: seq(send(bytewise(kosme)...), want(opText, kosme))},
		{id: "6.3.1", about: "invalid UTF-8 in one frame", run: seq(send(textFrame(invalid)), invalidPayload)},
		{id: "6.3.2", about: "invalid UTF-8, a frame per byte", run: seq(send(bytewise(invalid)...), invalidPayload)},
		{id: "6.4.1", about: "fail fast: invalid second of three fragments", run: failFast(send(fragment(opText, kosme, false), fragment(opContinuation, "\xf4\x90\x80\x80", false)))},
		{id: "6.4.2", about: "fail fast: invalid sequence split across fragments", run: failFast(send(fragment(opText, kosme+"\xf4", false), fragment(opContinuation, "\x90", false)))},
		{id: "6.4.3", about: "fail fast: invalid bytes mid-frame", run: failFast(raw(string(unmaskedFrom(len(ffFrame)))+kosme, "\xf4\x90\x80\x80"))},
		{id: "6.4.4", about: "fail fast: invalid sequence split mid-frame", run: failFast(raw(string(unmaskedFrom(len(ffFrame)))+kosme+"\xf4", "\x90"))},
		{id: "6.5.1", about: "valid UTF-8 κόσμε", run: echo(opText, []byte(kosme))},
	}
	// Two fragments split at every byte: the validation carries a
	// partial character across frames, and fails on the first bad byte
	// wherever the split falls.
	for k := 1; k < len(latin); k++ {
		cases = append(cases, confCase{id: fmt.Sprintf("6.2.5.%d", k), about: fmt.Sprintf("valid UTF-8 split after byte %d", k),
			run: seq(send(fragment(opText, latin[:k], false), fragment(opContinuation, latin[k:], true)), want(opText, latin))})
	}
	for k := 1; k < len(invalid); k++ {
		cases = append(cases, confCase{id: fmt.Sprintf("6.3.3.%d", k), about: fmt.Sprintf("invalid UTF-8 split after byte %d", k),
			run: seq(send(fragment(opText, invalid[:k], false), fragment(opContinuation, invalid[k:], true)), invalidPayload)})
	}
	counts := map[string]int{}
	for _, v := range utf8Vectors() {
		counts[v.group]++
		id := fmt.Sprintf("%s.%d", v.group, counts[v.group])
		if v.valid {
			cases = append(cases,
				confCase{id: id, about: fmt.Sprintf("valid %q", v.payload), run: echo(opText, []byte(v.payload))},
				confCase{id: id + "/bytes", about: fmt.Sprintf("valid %q, a frame per byte", v.payload), run: seq(send(bytewise(v.payload)...), want(opText, v.payload))})
		} else {
			cases = append(cases,
				confCase{id: id, about: fmt.Sprintf("invalid %q", v.payload), run: seq(send(textFrame(v.payload)), invalidPayload)},
				confCase{id: id + "/bytes", about: fmt.Sprintf("invalid %q, a frame per byte", v.payload), run: seq(send(bytewise(v.payload)...), invalidPayload)})
		}
	}
	return cases
}
