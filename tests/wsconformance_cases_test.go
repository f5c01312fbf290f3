//go:build linux

package tests

import (
	"bytes"
	binaryorder "encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The conformance cases, numbered after the Autobahn|Testsuite case
// groups they follow (its public descriptions: 1 framing, 2 pings and
// pongs, 3 reserved bits, 4 opcodes, 5 fragmentation, 6 UTF-8, 7 close
// handling, 9 limits, 10 misc, 12 and 13 permessage-deflate); the
// expectations are RFC 6455's and RFC 7692's. Every case runs on a
// connection of its own against a server that echoes each message as it
// came; a case that leaves the connection open ends with a close
// handshake, which checks the server is still well. Groups 6, 9-10 and
// 12-13 are in wsconformance_utf8_test.go, wsconformance_limits_test.go
// and wsconformance_deflate_test.go.

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
