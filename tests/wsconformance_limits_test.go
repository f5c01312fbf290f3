//go:build linux

package tests

import (
	binaryorder "encoding/binary"
	"fmt"
	"time"
)

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
