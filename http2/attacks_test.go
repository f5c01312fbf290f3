package http2

import (
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Each known flood is refused within bounded work, and its harmless twin
// (the same frames at an honest client's rate) is served.

// TestRapidReset: streams opened and reset at once while their handlers
// still run do not make room for more (CVE-2023-44487).
func TestRapidReset(t *testing.T) {
	p := newPeer(t, Config{MaxConcurrentStreams: 10, ResetBudget: 50})
	p.hold() // a slow app: no handler finishes
	p.start()
	id := uint32(1)
	for ; id < 2000 && p.err == nil; id += 2 {
		p.get(id, "/", true)
		p.must(p.framer.WriteRSTStream(id, http2.ErrCodeCancel))
		p.feed()
		if p.conn.served > 10 {
			t.Fatalf("%d streams held past a limit of 10", p.conn.served)
		}
	}
	p.goAway(http2.ErrCodeEnhanceYourCalm)
	if id > 200 {
		t.Fatalf("%d streams opened before the connection was closed", id/2)
	}
	if len(p.app.requests) != 10 {
		t.Fatalf("%d requests reached the app, want the 10 the limit allows", len(p.app.requests))
	}
}

// TestCancelsPaidBack: a client that cancels now and then (a browser
// leaving a page) among streams that complete keeps its connection.
func TestCancelsPaidBack(t *testing.T) {
	p := newPeer(t, Config{ResetBudget: 50})
	p.app.respond = reply
	p.start()
	for id := uint32(1); id < 4000; id += 2 {
		p.get(id, "/", id%8 != 1)
		if id%8 == 1 {
			p.must(p.framer.WriteRSTStream(id, http2.ErrCodeCancel))
		}
		p.feed()
		if p.err != nil {
			t.Fatalf("stream %d: %v", id, p.err)
		}
	}
}

// TestMadeYouReset: frames that make the server reset streams it has
// started serving are charged like the client's own resets
// (CVE-2025-8671).
func TestMadeYouReset(t *testing.T) {
	p := newPeer(t, Config{ResetBudget: 50})
	held := p.hold()
	p.start()
	for id := uint32(1); id < 2000 && p.err == nil; id += 2 {
		p.get(id, "/", true)
		p.must(p.framer.WriteWindowUpdate(id, 0)) // a stream error
		p.feed()
		for _, s := range *held {
			p.conn.Done(s) // the app notices the reset and stops
		}
		*held = (*held)[:0]
	}
	p.goAway(http2.ErrCodeEnhanceYourCalm)
	if n := len(p.app.requests); n > 60 {
		t.Fatalf("%d streams started before the connection was closed", n)
	}
}

// TestContinuationFlood: a header block that never ends is cut off once
// it passes twice the header list limit (CVE-2024-27316), whether its
// frames carry fields or nothing.
func TestContinuationFlood(t *testing.T) {
	t.Run("fields", func(t *testing.T) {
		p := newPeer(t, Config{MaxHeaderListSize: 4096})
		p.start()
		p.must(p.framer.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: p.block(":method", "GET")}))
		sent := 0
		for i := 0; i < 10000 && p.err == nil; i++ {
			fragment := p.block("x-flood", strings.Repeat("a", 100))
			sent += len(fragment)
			p.must(p.framer.WriteContinuation(1, false, fragment))
			p.feed()
		}
		p.goAway(http2.ErrCodeEnhanceYourCalm)
		if sent > 4096+minMaxFrameSize+200 {
			t.Fatalf("%d octets of header block taken", sent)
		}
	})
	t.Run("empty", func(t *testing.T) {
		p := newPeer(t, Config{MaxEmptyFrames: 100})
		p.start()
		p.must(p.framer.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: p.block(":method", "GET")}))
		for i := 0; i < 1000 && p.err == nil; i++ {
			p.must(p.framer.WriteContinuation(1, false, nil))
			p.feed()
		}
		p.goAway(http2.ErrCodeEnhanceYourCalm)
	})
	t.Run("a long block that ends", func(t *testing.T) {
		p := newPeer(t, Config{MaxHeaderListSize: 4096})
		p.app.respond = reply
		p.start()
		p.must(p.framer.WriteHeaders(http2.HeadersFrameParam{StreamID: 1,
			BlockFragment: p.block(":method", "GET", ":scheme", "http", ":path", "/")}))
		for i := 0; i < 5; i++ {
			p.must(p.framer.WriteContinuation(1, i == 4, p.block("x-part", strings.Repeat("b", 100))))
		}
		p.feed()
		if p.err != nil || len(p.app.requests) != 1 {
			t.Fatalf("block in six frames not served: %v", p.err)
		}
	})
}

// TestHPACKBomb: a small block that decodes into a header list over the
// limit (one large table entry referenced many times) is answered 431
// without the list being kept, and the connection goes on; one that
// decodes to far more closes the connection (CVE-2016-6581's shape).
func TestHPACKBomb(t *testing.T) {
	bomb := func(p *peer, stream uint32, references int) {
		p.encoded.Reset()
		for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"},
			{Name: ":path", Value: "/"}, {Name: "x-big", Value: strings.Repeat("z", 3000)}} {
			p.must(p.enc.WriteField(f))
		}
		// The entry is now index 62: each 0xbe octet is 3 KB more.
		block := append(append([]byte(nil), p.encoded.Bytes()...), []byte(strings.Repeat("\xbe", references))...)
		p.must(p.framer.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block, EndStream: true, EndHeaders: true}))
		p.feed()
		if len(p.app.requests) != 0 {
			t.Fatal("a header list over the limit reached the app")
		}
		if cap(p.conn.fields) > 64 {
			t.Fatalf("%d fields kept for an oversized list", cap(p.conn.fields))
		}
	}
	p := newPeer(t, Config{MaxHeaderListSize: 16 << 10})
	p.app.respond = reply
	p.start()
	bomb(p, 1, 6) // 21 KB: over the limit, under twice it
	h := p.expect(http2.FrameHeaders).(*http2.MetaHeadersFrame)
	if h.PseudoValue("status") != "431" {
		t.Fatalf("status %q, want 431", h.PseudoValue("status"))
	}
	p.get(3, "/", true)
	p.feed()
	if p.err != nil || len(p.app.requests) != 1 {
		t.Fatalf("connection did not go on after the 431: %v", p.err)
	}

	p = newPeer(t, Config{MaxHeaderListSize: 16 << 10})
	p.start()
	bomb(p, 1, 2000) // 6 MB
	p.goAway(http2.ErrCodeEnhanceYourCalm)
}

// TestControlFloods: PINGs and SETTINGS whose acks the client never reads
// pile up only to a bound (CVE-2019-9512, 9515); a client that reads its
// acks may send as many as it likes.
func TestControlFloods(t *testing.T) {
	for _, kind := range []string{"ping", "settings"} {
		write := func(p *peer) {
			if kind == "ping" {
				p.must(p.framer.WritePing(false, [8]byte{}))
			} else {
				p.must(p.framer.WriteSettings())
			}
		}
		t.Run(kind+" unread", func(t *testing.T) {
			p := newPeer(t, Config{MaxQueuedControl: 500})
			p.start()
			for i := 0; i < 600; i++ {
				write(p)
			}
			n, err := p.conn.Feed(p.in.Bytes()) // the output is never read
			if err == nil || err.(*ConnError).Code != ErrCodeEnhanceYourCalm {
				t.Fatalf("after %d octets: %v, want ENHANCE_YOUR_CALM", n, err)
			}
		})
		t.Run(kind+" read", func(t *testing.T) {
			p := newPeer(t, Config{MaxQueuedControl: 500})
			p.start()
			for i := 0; i < 5000; i++ {
				write(p)
				if i%100 == 0 {
					p.feed()
				}
			}
			p.feed()
			if p.err != nil {
				t.Fatal(p.err)
			}
		})
	}
}

// TestEmptyDataFlood: DATA frames that carry nothing and end nothing are
// bounded (CVE-2019-9518); a body that ends with an empty frame is not.
func TestEmptyDataFlood(t *testing.T) {
	p := newPeer(t, Config{MaxEmptyFrames: 100})
	p.hold()
	p.start()
	p.headers(1, false, ":method", "POST", ":scheme", "http", ":path", "/")
	for i := 0; i < 1000 && p.err == nil; i++ {
		p.must(p.framer.WriteData(1, false, nil))
		p.feed()
	}
	p.goAway(http2.ErrCodeEnhanceYourCalm)

	p = newPeer(t, Config{MaxEmptyFrames: 100, MaxConcurrentStreams: 1000})
	p.hold()
	p.start()
	for id := uint32(1); id < 1000; id += 2 {
		p.headers(id, false, ":method", "POST", ":scheme", "http", ":path", "/")
		p.must(p.framer.WriteData(id, true, nil))
	}
	p.feed()
	if p.err != nil {
		t.Fatal(p.err)
	}
}

// TestLastStreamID: the largest stream id is served; the client can open
// no stream after it, and a smaller one is a protocol error (§5.1.1; issue
// 37 found STREAM_CLOSED here).
func TestLastStreamID(t *testing.T) {
	p := newPeer(t, Config{})
	p.app.respond = reply
	p.start()
	p.get(1<<31-1, "/", true)
	p.feed()
	if len(p.app.requests) != 1 || p.err != nil {
		t.Fatalf("stream 2^31-1 not served: %v", p.err)
	}
	p.get(7, "/", true)
	p.feed()
	p.goAway(http2.ErrCodeProtocol)
}
