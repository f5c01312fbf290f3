//go:build linux

package tests

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"strconv"
	"strings"
)

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

// confDeflate is the client's half of permessage-deflate (RFC 7692): it
// compresses every message on its own (no context takeover, always
// allowed to a sender) with a window any client_max_window_bits allows,
// and inflates keeping the server's window across messages unless the
// server agreed to server_no_context_takeover.
type confDeflate struct {
	serverNoContext bool
	// clientWindowBits is what the server allowed the client (15 when
	// it set no limit).
	clientWindowBits int
	history          []byte // the last 32 KiB the server sent, for context takeover
}

// parseDeflateResponse checks the accepted extension against the offer.
func parseDeflateResponse(accepted, offer string) (*confDeflate, error) {
	if strings.Contains(accepted, ",") {
		return nil, fmt.Errorf("more than one extension accepted: %q", accepted)
	}
	params := strings.Split(accepted, ";")
	if strings.TrimSpace(params[0]) != "permessage-deflate" {
		return nil, fmt.Errorf("extension %q was not offered", params[0])
	}
	d := &confDeflate{clientWindowBits: 15}
	seen := map[string]bool{}
	for _, p := range params[1:] {
		name, value, hasValue := strings.Cut(strings.TrimSpace(p), "=")
		value = strings.Trim(value, `"`)
		if seen[name] {
			return nil, fmt.Errorf("parameter %s twice in %q", name, accepted)
		}
		seen[name] = true
		switch name {
		case "server_no_context_takeover", "client_no_context_takeover":
			if hasValue {
				return nil, fmt.Errorf("%s with a value in %q", name, accepted)
			}
			d.serverNoContext = d.serverNoContext || name == "server_no_context_takeover"
		case "server_max_window_bits", "client_max_window_bits":
			bits, err := strconv.Atoi(value)
			if !hasValue || err != nil || bits < 8 || bits > 15 {
				return nil, fmt.Errorf("%s=%q in %q", name, value, accepted)
			}
			if name == "client_max_window_bits" {
				if !strings.Contains(offer, "client_max_window_bits") {
					return nil, fmt.Errorf("client_max_window_bits in the answer to %q, which did not offer it (§7.1.2.2)", offer)
				}
				d.clientWindowBits = bits
			} else if limit := offeredBits(offer, "server_max_window_bits"); limit > 0 && bits > limit {
				return nil, fmt.Errorf("server_max_window_bits=%d above the %d offered", bits, limit)
			}
		default:
			return nil, fmt.Errorf("unknown parameter %q in %q", name, accepted)
		}
	}
	if offer != "" && strings.Contains(offer, "server_no_context_takeover") && !d.serverNoContext &&
		!strings.Contains(offer, ",") {
		return nil, fmt.Errorf("server_no_context_takeover offered but not in the answer %q (§7.1.1.1)", accepted)
	}
	return d, nil
}

// offeredBits is the value of param in the first offer that has it.
func offeredBits(offer, param string) int {
	_, rest, ok := strings.Cut(offer, param+"=")
	if !ok {
		return 0
	}
	end := strings.IndexAny(rest, ";, ")
	if end < 0 {
		end = len(rest)
	}
	bits, _ := strconv.Atoi(rest[:end])
	return bits
}

// compress deflates a message on its own and strips the final empty
// block's 00 00 ff ff (§7.2.1). Under a window limit below 15 bits it
// uses Huffman coding only, which refers back to nothing.
func (d *confDeflate) compress(payload []byte) []byte {
	level := flate.BestSpeed
	if d.clientWindowBits < 15 {
		level = flate.HuffmanOnly
	}
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, level)
	w.Write(payload)
	w.Flush()
	out := buf.Bytes()
	return bytes.TrimSuffix(out, []byte{0, 0, 0xff, 0xff})
}

// inflate appends the tail §7.2.2 says the sender stripped, and a final
// empty stored block so the reader ends cleanly.
func (d *confDeflate) inflate(payload []byte) ([]byte, error) {
	src := append(append(payload, 0, 0, 0xff, 0xff), 0x01, 0, 0, 0xff, 0xff)
	var dict []byte
	if !d.serverNoContext {
		dict = d.history
	}
	r := flate.NewReaderDict(bytes.NewReader(src), dict)
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("server's compressed message: %v", err)
	}
	if !d.serverNoContext {
		d.history = append(d.history, out...)
		if len(d.history) > 32<<10 {
			d.history = append([]byte(nil), d.history[len(d.history)-32<<10:]...)
		}
	}
	return out, nil
}
