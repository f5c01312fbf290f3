//go:build linux

package tests

import (
	"bytes"
	binaryorder "encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"
)

// The conformance cases, numbered after the Autobahn|Testsuite case
// groups they follow (its public descriptions: 1 framing, 2 pings and
// pongs, 3 reserved bits, 4 opcodes, 5 fragmentation, 6 UTF-8, 7 close
// handling, 9 limits, 10 misc, 12 and 13 permessage-deflate); the
// expectations are RFC 6455's and RFC 7692's. Every case runs on a
// connection of its own against a server that echoes each message as it
// came; a case that leaves the connection open ends with a close
// handshake, which checks the server is still well.

// confCase is one case.
type confCase struct {
	id    string
	about string
	// offer is the Sec-WebSocket-Extensions value the client sends.
	offer string
	run   func(c *confClient) error
}

// confMaxSize is the message limit the servers under test are given
// (--ws-max-size); the limit cases go past it.
const confMaxSize = 8 << 20

// confCases is every case, in order.
func confCases() []confCase {
	var cases []confCase
	for _, group := range []func() []confCase{
		framingCases, pingCases, reservedBitCases, opcodeCases, fragmentationCases,
		utf8Cases, closeCases, limitCases, compressionCases, negotiationCases,
	} {
		cases = append(cases, group()...)
	}
	return cases
}

// echo sends a message in one frame and wants it back as it went.
func echo(op byte, payload []byte) func(c *confClient) error {
	return func(c *confClient) error {
		if err := c.write(confFrame{fin: true, op: op, payload: payload}); err != nil {
			return err
		}
		return c.expectMessage(op, payload)
	}
}

// seq runs steps in order, stopping at the first error.
func seq(steps ...func(c *confClient) error) func(c *confClient) error {
	return func(c *confClient) error {
		for _, step := range steps {
			if err := step(c); err != nil {
				return err
			}
		}
		return nil
	}
}

func send(frames ...confFrame) func(c *confClient) error {
	return func(c *confClient) error { return c.write(frames...) }
}

func sendEach(frames ...confFrame) func(c *confClient) error {
	return func(c *confClient) error { return c.writeEach(frames...) }
}

func sendChopped(chop int, frames ...confFrame) func(c *confClient) error {
	return func(c *confClient) error { return c.writeChopped(chop, frames...) }
}

func want(op byte, payload string) func(c *confClient) error {
	return func(c *confClient) error { return c.expectMessage(op, []byte(payload)) }
}

func fail(codes ...int) func(c *confClient) error {
	return func(c *confClient) error { return c.expectFailure(codes...) }
}

// echoThenFail wants the echo of the message sent before a bad frame and
// then the failure. Autobahn grades a server that fails the connection
// before echoing (it read both at once) NON-STRICT, as this does.
func echoThenFail(op byte, payload string, codes ...int) func(c *confClient) error {
	return func(c *confClient) error {
		m, err := c.readMessage()
		if err == nil {
			if m.op != op || string(m.payload) != payload {
				return fmt.Errorf("got %s %s, want the echo of %q or the failure", opName(m.op), preview(m.payload), payload)
			}
			return c.expectFailure(codes...)
		}
		c.closed = true
		var closed *confClosed
		switch {
		case errors.As(err, &closed) && containsInt(codes, closed.code):
			c.notes = append(c.notes, "failed without echoing the message before the bad frame")
			c.write(closeFrame(closed.code, ""))
			return c.expectEnd()
		case isEnd(err):
			c.notes = append(c.notes, "dropped the connection without echoing the message before the bad frame")
			return nil
		}
		return fmt.Errorf("want the echo of %q, then the failure with %v: %w", payload, codes, err)
	}
}

// protocolError is the failure §7.4.1 names for a framing violation.
var protocolError = fail(1002)

// sentinel sends a ping and wants its pong as the next frame: what was
// sent before it got no answer.
func sentinel(c *confClient) error {
	if err := c.write(pingFrame("sentinel")); err != nil {
		return err
	}
	return c.expectMessage(opPong, []byte("sentinel"))
}

// payloadOf is n bytes of printable text, different per size.
func payloadOf(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + (i*7+n)%26)
	}
	return b
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// 1: framing. Text and binary messages at every length boundary of §5.2
// (7-bit, 16-bit, 64-bit lengths), and one arriving in 997-byte pieces.
func framingCases() []confCase {
	var cases []confCase
	for g, op := range []byte{opText, opBinary} {
		for i, n := range []int{0, 125, 126, 127, 128, 65535, 65536} {
			cases = append(cases, confCase{id: fmt.Sprintf("1.%d.%d", g+1, i+1), about: fmt.Sprintf("%s message of %d bytes", opName(op), n),
				run: echo(op, payloadOf(n))})
		}
		payload := payloadOf(65536)
		cases = append(cases, confCase{id: fmt.Sprintf("1.%d.8", g+1), about: "65536 bytes in 997-byte writes",
			run: seq(sendChopped(997, confFrame{fin: true, op: op, payload: payload}), want(op, string(payload)))})
	}
	return cases
}

// 2: pings and pongs (§5.5.2, §5.5.3): a ping gets a pong with its
// payload, a control frame over 125 bytes fails the connection, an
// unsolicited pong gets nothing.
func pingCases() []confCase {
	binaryPing := "\x00\xff\xfe\xfd\xfc\xfb\x00\xff"
	long := strings.Repeat("\xfe", 125)
	tenPings := func(write func(c *confClient, frames ...confFrame) error) func(c *confClient) error {
		return func(c *confClient) error {
			var frames []confFrame
			for i := range 10 {
				frames = append(frames, pingFrame(fmt.Sprintf("payload-%d", i)))
			}
			if err := write(c, frames...); err != nil {
				return err
			}
			for i := range 10 {
				if err := c.expectMessage(opPong, []byte(fmt.Sprintf("payload-%d", i))); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return []confCase{
		{id: "2.1", about: "ping without payload", run: seq(send(pingFrame("")), want(opPong, ""))},
		{id: "2.2", about: "ping with a text payload", run: seq(send(pingFrame("Hello, world!")), want(opPong, "Hello, world!"))},
		{id: "2.3", about: "ping with a binary payload", run: seq(send(pingFrame(binaryPing)), want(opPong, binaryPing))},
		{id: "2.4", about: "ping of 125 bytes", run: seq(send(pingFrame(long)), want(opPong, long))},
		{id: "2.5", about: "ping of 126 bytes", run: seq(send(pingFrame(long+"\xfe")), protocolError)},
		{id: "2.6", about: "ping of 125 bytes in 1-byte writes", run: seq(sendChopped(1, pingFrame(long)), want(opPong, long))},
		{id: "2.7", about: "unsolicited pong without payload", run: seq(send(dataFrame(opPong, "")), sentinel)},
		{id: "2.8", about: "unsolicited pong with payload", run: seq(send(dataFrame(opPong, "unsolicited pong payload")), sentinel)},
		{id: "2.9", about: "unsolicited pong, then ping", run: seq(send(dataFrame(opPong, "unsolicited"), pingFrame("ping payload")), want(opPong, "ping payload"))},
		{id: "2.10", about: "10 pings, 10 pongs", run: tenPings((*confClient).write)},
		{id: "2.11", about: "10 pings in 1-byte writes", run: tenPings(func(c *confClient, f ...confFrame) error { return c.writeChopped(1, f...) })},
	}
}

// 3: reserved bits (§5.2): a frame with an RSV bit no extension defined
// fails the connection, after what came before it was answered.
func reservedBitCases() []confCase {
	withRSV := func(f confFrame, rsv byte) confFrame { f.rsv = rsv; return f }
	bad := withRSV(textFrame("Hello, world!"), 2)
	return []confCase{
		{id: "3.1", about: "text with RSV3", run: seq(send(withRSV(textFrame("Hello, world!"), 1)), protocolError)},
		{id: "3.2", about: "text, text with RSV2, ping", run: seq(send(textFrame("Hello, world!"), bad, pingFrame("")), echoThenFail(opText, "Hello, world!", 1002))},
		{id: "3.3", about: "as 3.2, a write per frame", run: seq(sendEach(textFrame("Hello, world!"), bad, pingFrame("")), echoThenFail(opText, "Hello, world!", 1002))},
		{id: "3.4", about: "as 3.2, 1-byte writes", run: seq(sendChopped(1, textFrame("Hello, world!"), bad, pingFrame("")), echoThenFail(opText, "Hello, world!", 1002))},
		{id: "3.5", about: "binary with RSV1 and RSV3, no extension", run: seq(send(withRSV(dataFrame(opBinary, "\x00\xff\xfe\xfd"), 5)), protocolError)},
		{id: "3.6", about: "ping with RSV1 and RSV2", run: seq(send(withRSV(pingFrame("Hello, world!"), 6)), protocolError)},
		{id: "3.7", about: "close with every RSV bit", run: seq(send(withRSV(closeFrame(1000, ""), 7)), protocolError)},
	}
}

// 4: reserved opcodes (§5.2: 3-7 data, 11-15 control) fail the connection.
func opcodeCases() []confCase {
	var cases []confCase
	for g, ops := range [][]byte{{3, 4, 5, 6, 7}, {11, 12, 13, 14, 15}} {
		for i, op := range ops {
			frame := confFrame{fin: true, op: op}
			if i%2 == 1 {
				frame.payload = []byte("reserved opcode payload")
			}
			run := seq(send(frame), protocolError)
			if i >= 2 {
				run = seq(send(textFrame("Hello, world!"), frame, pingFrame("")), echoThenFail(opText, "Hello, world!", 1002))
			}
			cases = append(cases, confCase{id: fmt.Sprintf("4.%d.%d", g+1, i+1), about: fmt.Sprintf("reserved opcode %d", op), run: run})
		}
	}
	return cases
}

// 5: fragmentation (§5.4): control frames are never fragmented and may
// come between fragments; a continuation needs a message to continue,
// and a message must end before the next begins.
func fragmentationCases() []confCase {
	f1, f2 := fragment(opText, "fragment1", false), fragment(opContinuation, "fragment2", true)
	ping := pingFrame("ping payload")
	orphan := []confFrame{fragment(opContinuation, "non-continuation payload", true), textFrame("Hello, world!")}
	orphanOpen := []confFrame{fragment(opContinuation, "non-continuation payload", false), textFrame("Hello, world!")}
	writes := []struct {
		how   string
		write func(frames ...confFrame) func(c *confClient) error
	}{
		{"one write", send}, {"a write per frame", sendEach},
		{"1-byte writes", func(frames ...confFrame) func(c *confClient) error { return sendChopped(1, frames...) }},
	}
	cases := []confCase{
		{id: "5.1", about: "ping in two fragments", run: seq(send(fragment(opPing, "fragment1", false), fragment(opContinuation, "fragment2", true)), protocolError)},
		{id: "5.2", about: "pong in two fragments", run: seq(send(fragment(opPong, "fragment1", false), fragment(opContinuation, "fragment2", true)), protocolError)},
	}
	for i, w := range writes {
		cases = append(cases,
			confCase{id: fmt.Sprintf("5.%d", 3+i), about: "text in two fragments, " + w.how, run: seq(w.write(f1, f2), want(opText, "fragment1fragment2"))},
			confCase{id: fmt.Sprintf("5.%d", 6+i), about: "ping between fragments, " + w.how, run: seq(w.write(f1, ping, f2), want(opPong, "ping payload"), want(opText, "fragment1fragment2"))},
			confCase{id: fmt.Sprintf("5.%d", 9+i), about: "continuation with FIN and nothing to continue, " + w.how, run: seq(w.write(orphan...), protocolError)},
			confCase{id: fmt.Sprintf("5.%d", 12+i), about: "continuation without FIN and nothing to continue, " + w.how, run: seq(w.write(orphanOpen...), protocolError)},
		)
	}
	twice := func(first confFrame) []confFrame {
		var frames []confFrame
		for range 2 {
			frames = append(frames, first, fragment(opText, "fragment2", false), fragment(opContinuation, "fragment3", true))
		}
		return frames
	}
	five := func(i int) confFrame { return fragment(opContinuation, fmt.Sprintf("fragment%d", i), i == 5) }
	cases = append(cases,
		confCase{id: "5.15", about: "a message, then a continuation and a text without FIN", run: seq(send(f1, f2, fragment(opContinuation, "fragment3", false), fragment(opText, "fragment4", true)), echoThenFail(opText, "fragment1fragment2", 1002))},
		confCase{id: "5.16", about: "continuation without FIN, text without FIN, continuation, twice", run: seq(send(twice(fragment(opContinuation, "fragment1", false))...), protocolError)},
		confCase{id: "5.17", about: "continuation with FIN, text without FIN, continuation, twice", run: seq(send(twice(fragment(opContinuation, "fragment1", true))...), protocolError)},
		confCase{id: "5.18", about: "text without FIN, then text with FIN", run: seq(send(f1, fragment(opText, "fragment2", true)), protocolError)},
		confCase{id: "5.19", about: "text in five fragments, two pings between", run: seq(
			send(fragment(opText, "fragment1", false), five(2), pingFrame("pongme 1!"), five(3), five(4), pingFrame("pongme 2!"), five(5)),
			want(opPong, "pongme 1!"), want(opPong, "pongme 2!"), want(opText, "fragment1fragment2fragment3fragment4fragment5"))},
		// The pongs come while the message is still open: the server does
		// not hold control frames back until the message ends.
		confCase{id: "5.20", about: "as 5.19, each pong awaited before the next fragment", run: seq(
			send(fragment(opText, "fragment1", false), five(2), pingFrame("pongme 1!")), want(opPong, "pongme 1!"),
			send(five(3), five(4), pingFrame("pongme 2!")), want(opPong, "pongme 2!"),
			send(five(5)), want(opText, "fragment1fragment2fragment3fragment4fragment5"))},
	)
	return cases
}

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

// 7: close handling (§5.5.1, §7): after a Close nothing more is answered;
// a valid code comes back, an invalid one, a 1-byte payload, a reason
// over 123 bytes or one not UTF-8 fail the connection.
func closeCases() []confCase {
	closeReply := func(code int) func(c *confClient) error {
		return func(c *confClient) error { return c.expectCloseReply(code) }
	}
	bigEcho := func(c *confClient) error {
		big := payloadOf(256 << 10)
		if err := c.write(textFrame(string(big)), closeFrame(1000, ""), pingFrame("")); err != nil {
			return err
		}
		// The message may be echoed before the Close is answered (the
		// server read it first), or not.
		m, err := c.readMessage()
		if err == nil && !(m.op == opText && bytes.Equal(m.payload, big)) {
			return fmt.Errorf("got %s of %d bytes, want the echo or the Close", opName(m.op), len(m.payload))
		}
		if err == nil {
			return closeReply(1000)(c)
		}
		if closed, ok := err.(*confClosed); !ok || closed.code != 1000 {
			return fmt.Errorf("want the Close answered: %v", err)
		}
		c.closed = true
		return c.expectEnd()
	}
	cases := []confCase{
		{id: "7.1.1", about: "text, then close", run: seq(send(textFrame("Hello World!")), want(opText, "Hello World!"), func(c *confClient) error { return c.closeHandshake(1000, "") })},
		{id: "7.1.2", about: "close twice", run: seq(send(closeFrame(1000, ""), closeFrame(1000, "")), closeReply(1000))},
		{id: "7.1.3", about: "close, then ping", run: seq(send(closeFrame(1000, ""), pingFrame("")), closeReply(1000))},
		{id: "7.1.4", about: "close, then text", run: seq(send(closeFrame(1000, ""), textFrame("Hello World!")), closeReply(1000))},
		{id: "7.1.5", about: "fragment, close, last fragment", run: seq(send(fragment(opText, "fragment1", false), closeFrame(1000, ""), fragment(opContinuation, "fragment2", true)), closeReply(1000))},
		{id: "7.1.6", about: "256 KiB text, close, ping", run: bigEcho},
		{id: "7.3.1", about: "close without payload", run: func(c *confClient) error { return c.closeHandshake(0, "") }},
		{id: "7.3.2", about: "close with a 1-byte payload", run: seq(send(confFrame{fin: true, op: opClose, payload: []byte("a")}), protocolError)},
		{id: "7.3.3", about: "close 1000 without reason", run: func(c *confClient) error { return c.closeHandshake(1000, "") }},
		{id: "7.3.4", about: "close 1000 with a reason", run: func(c *confClient) error { return c.closeHandshake(1000, "Hello World!") }},
		{id: "7.3.5", about: "close 1000 with a 123-byte reason", run: func(c *confClient) error { return c.closeHandshake(1000, strings.Repeat("*", 123)) }},
		{id: "7.3.6", about: "close with a 124-byte reason (126-byte payload)", run: seq(send(closeFrame(1000, strings.Repeat("*", 124))), protocolError)},
		{id: "7.5.1", about: "close with a reason that is not UTF-8", run: seq(send(closeFrame(1000, "κόσμε\xed\xa0\x80edited")), fail(1007))},
	}
	for i, code := range []int{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999} {
		cases = append(cases, confCase{id: fmt.Sprintf("7.7.%d", i+1), about: fmt.Sprintf("close %d echoed", code),
			run: func(c *confClient) error { return c.closeHandshake(code, "") }})
	}
	for i, code := range []int{0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535} {
		payload := binaryorder.BigEndian.AppendUint16(nil, uint16(code))
		cases = append(cases, confCase{id: fmt.Sprintf("7.9.%d", i+1), about: fmt.Sprintf("close with invalid code %d", code),
			run: seq(send(confFrame{fin: true, op: opClose, payload: payload}), protocolError)})
	}
	return cases
}

// 9 and 10: limits. Big messages whole, fragmented and in small writes,
// many round trips, and past the server's --ws-max-size: 1009 on a
// frame's declared length before its payload arrives, and on a
// fragmented message's total.
func limitCases() []confCase {
	var cases []confCase
	for g, op := range []byte{opText, opBinary} {
		for i, n := range []int{64 << 10, 256 << 10, 1 << 20, 2 << 20} {
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+1, i+1), about: fmt.Sprintf("%s message of %d KiB", opName(op), n>>10), run: echo(op, payloadOf(n))})
		}
		for i, size := range []int{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10} {
			payload := payloadOf(256 << 10)
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+3, i+1), about: fmt.Sprintf("256 KiB %s in %d-byte fragments", opName(op), size),
				run: func(c *confClient) error {
					if err := c.sendMessage(op, payload, false, size); err != nil {
						return err
					}
					return c.expectMessage(op, payload)
				}})
		}
		for i, chop := range []int{64, 256, 1 << 10, 4 << 10} {
			payload := payloadOf(256 << 10)
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+5, i+1), about: fmt.Sprintf("256 KiB %s in %d-byte writes", opName(op), chop),
				run: seq(sendChopped(chop, confFrame{fin: true, op: op, payload: payload}), want(op, string(payload)))})
		}
		for i, n := range []int{0, 16, 64, 256, 1024, 4096} {
			payload := payloadOf(n)
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+7, i+1), about: fmt.Sprintf("100 round trips of %d-byte %s", n, opName(op)),
				run: func(c *confClient) error {
					for range 100 {
						if err := c.write(confFrame{fin: true, op: op, payload: payload}); err != nil {
							return err
						}
						if err := c.expectMessage(op, payload); err != nil {
							return err
						}
					}
					return nil
				}})
		}
	}
	overDeclared := func(c *confClient) error {
		// Only the header and 1 KiB of a frame declaring one byte over the
		// limit: the server must not wait for the rest.
		head := []byte{0x82, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		binaryorder.BigEndian.PutUint64(head[2:10], confMaxSize+1)
		if err := c.writeRaw(append(head, make([]byte, 1024)...)); err != nil {
			return err
		}
		// A bound on a failing case: the failure is expected at once.
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		return c.expectFailure(1009)
	}
	overFragmented := func(c *confClient) error {
		part := payloadOf(1 << 20)
		for i := 0; i <= confMaxSize>>20; i++ {
			op := opContinuation
			if i == 0 {
				op = opBinary
			}
			if err := c.write(confFrame{op: op, payload: part}); err != nil {
				return c.expectFailure(1009)
			}
		}
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		return c.expectFailure(1009)
	}
	big := payloadOf(65536)
	cases = append(cases,
		confCase{id: "9.9.1", about: "a frame declaring one byte over --ws-max-size", run: overDeclared},
		confCase{id: "9.9.2", about: "1 MiB fragments past --ws-max-size", run: overFragmented},
		confCase{id: "10.1.1", about: "64 KiB text in 1300-byte fragments", run: func(c *confClient) error {
			if err := c.sendMessage(opText, big, false, 1300); err != nil {
				return err
			}
			return c.expectMessage(opText, big)
		}},
	)
	return cases
}

// compressible is JSON-like text that deflate shrinks.
func compressible(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","tags":["alpha","beta"],"ok":true},`, i, i%97)
	}
	return b.Bytes()[:n]
}

// 12: permessage-deflate (RFC 7692): messages of every size, compressible
// or not, sent compressed or plain, whole or fragmented, come back; the
// server's own compressed messages inflate (with its context when it
// keeps one). RSV1 on a control frame or a continuation fails the
// connection, and a message inflating past --ws-max-size is 1009.
func compressionCases() []confCase {
	const offer = "permessage-deflate"
	kinds := []struct {
		name    string
		op      byte
		payload func(n int) []byte
	}{
		{"JSON text", opText, compressible},
		{"random binary", opBinary, func(n int) []byte { return randomBytes(n, 12) }},
		{"zeros", opBinary, func(n int) []byte { return make([]byte, n) }},
	}
	var cases []confCase
	for k, kind := range kinds {
		for i, n := range []int{16, 64, 256, 1024, 4096, 16384, 65536, 131072} {
			payload := kind.payload(n)
			cases = append(cases, confCase{id: fmt.Sprintf("12.%d.%d", k+1, i+1), about: fmt.Sprintf("5 %s messages of %d bytes, compressed and plain", kind.name, n), offer: offer,
				run: func(c *confClient) error {
					if c.deflate == nil {
						return fmt.Errorf("permessage-deflate was not negotiated")
					}
					for j := range 5 {
						if err := c.sendMessage(kind.op, payload, j%2 == 0, 0); err != nil {
							return err
						}
						if err := c.expectMessage(kind.op, payload); err != nil {
							return fmt.Errorf("message %d: %w", j, err)
						}
					}
					return nil
				}})
		}
	}
	withRSV1 := func(f confFrame) confFrame { f.rsv = 4; return f }
	bomb := make([]byte, confMaxSize+(1<<20))
	cases = append(cases,
		confCase{id: "12.4.1", about: "a compressed message in 1000-byte fragments", offer: offer, run: func(c *confClient) error {
			payload := randomBytes(20000, 4)
			if c.deflate == nil {
				return fmt.Errorf("permessage-deflate was not negotiated")
			}
			if err := c.sendMessage(opBinary, payload, true, 1000); err != nil {
				return err
			}
			return c.expectMessage(opBinary, payload)
		}},
		confCase{id: "12.4.2", about: "RSV1 on a ping", offer: offer, run: seq(send(withRSV1(pingFrame("x"))), protocolError)},
		confCase{id: "12.4.3", about: "RSV1 on a continuation", offer: offer, run: seq(send(fragment(opText, "a", false), withRSV1(fragment(opContinuation, "b", true))), protocolError)},
		confCase{id: "12.4.4", about: "RSV1 without permessage-deflate", run: seq(send(withRSV1(textFrame("not compressed"))), protocolError)},
		confCase{id: "12.4.5", about: "a message inflating past --ws-max-size", offer: offer, run: func(c *confClient) error {
			if c.deflate == nil {
				return fmt.Errorf("permessage-deflate was not negotiated")
			}
			if err := c.sendMessage(opBinary, bomb, true, 0); err != nil {
				return err
			}
			return c.expectFailure(1009)
		}},
	)
	return cases
}

// 13: negotiation (RFC 7692 §5, §7.1): whatever the server accepts of
// each offer, the answer is consistent with it (the client checks) and
// messages round trip under it, several in a row so that a server
// keeping its context is exercised; offers it must decline are declined.
func negotiationCases() []confCase {
	offers := []struct {
		offer    string
		declined bool
	}{
		{"permessage-deflate", false},
		{"permessage-deflate; client_no_context_takeover", false},
		{"permessage-deflate; server_no_context_takeover", false},
		{"permessage-deflate; client_max_window_bits", false},
		{"permessage-deflate; client_max_window_bits=9", false},
		{"permessage-deflate; server_max_window_bits=15", false},
		{"permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits=8", false},
		{"permessage-deflate; server_max_window_bits=9, permessage-deflate", false},
		{"x-webkit-deflate-frame, permessage-deflate", false},
		{"permessage-deflate; unknown_parameter", true},
		{"permessage-deflate; server_max_window_bits=16", true},
		{"permessage-deflate; client_max_window_bits=7", true},
		{"permessage-deflate; server_no_context_takeover=1", true},
		{"permessage-deflate; client_no_context_takeover; client_no_context_takeover", true},
	}
	var cases []confCase
	for i, o := range offers {
		cases = append(cases, confCase{id: fmt.Sprintf("13.%d", i+1), about: "offer " + o.offer, offer: o.offer,
			run: func(c *confClient) error {
				if o.declined && c.deflate != nil {
					return fmt.Errorf("the server accepted an offer it must decline")
				}
				for _, n := range []int{16, 1024, 65536, 1024, 16} {
					payload := compressible(n)
					if err := c.sendMessage(opText, payload, c.deflate != nil, 0); err != nil {
						return err
					}
					if err := c.expectMessage(opText, payload); err != nil {
						return err
					}
				}
				return nil
			}})
	}
	return cases
}
