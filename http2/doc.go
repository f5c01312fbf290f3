// Package http2 speaks HTTP/2, RFC 9113, for a server: the connection's
// state machine, beside http1 and ws.
//
// It is pure Go: no syscalls, no goroutines, no socket. A Conn is fed the
// bytes a connection received, in whatever pieces they came, and appends
// what is to be sent to its output, which the caller sends. Its Handler
// hears of requests, body pieces and resets as the frames arrive, and
// answers through the Conn's write methods, which never block: a response
// that outruns the client's flow-control window waits, and the handler
// hears when the window opens. In steady state a request and its response
// allocate nothing (BenchmarkConnRequest); x/net/http2's Framer, which
// reads from an io.Reader into frames it allocates, costs 11 allocations a
// HEADERS frame on the same input (BenchmarkFramerRead), so the frames are
// read here, in place, and only HPACK is x/net's (hpack.Decoder and
// hpack.Encoder, well kept and fuzzed).
//
// What a Conn enforces, by section:
//
//   - The client preface, and SETTINGS as the first frame (§3.4).
//   - Frame sizes: a frame over SETTINGS_MAX_FRAME_SIZE is refused from
//     its header, before its payload is buffered (§4.2), and each type's
//     fixed lengths (§6).
//   - Header blocks: nothing between HEADERS and its CONTINUATIONs (§4.3);
//     every block is decoded, even one for a stream refused or reset, so
//     that the HPACK table stays the client's (§4.3).
//   - Stream states (§5.1): one state a stream (state.go), changed only
//     by the transitions §5.1 allows. New ids only grow and are odd: a
//     HEADERS on a lower id never opened is a PROTOCOL_ERROR (§5.1.1), on
//     one closed a STREAM_CLOSED; frames on idle streams are connection
//     errors; DATA after END_STREAM resets the stream; late frames for a
//     stream the server reset are ignored, for as long as a ring of the
//     last closed streams remembers it.
//   - Flow control both ways (§6.9): the connection's and each stream's
//     window, padding counted, windows past 2^31-1 refused; credit goes
//     back to the client as the handler consumes the body (Consumed), a
//     quarter-window at a time.
//   - Requests (§8.3.1): the four pseudo-headers, once each, before the
//     regular fields, each value by its grammar (chars.go): :method a
//     token, :path an origin-form target or "*" for OPTIONS, :authority
//     a host and port without userinfo (and a host field, if any, the
//     same), :scheme a scheme; field names lower-case tokens and values
//     without NUL, CR, LF, another control or white space at their ends
//     (§8.2.1); no connection-specific fields (§8.2.2); te only
//     "trailers"; content-length matching the DATA received (§8.1.1);
//     extended CONNECT only when offered (RFC 8441). A malformed request
//     resets its stream with PROTOCOL_ERROR and is told to the handler
//     (Malformed), never given to it.
//   - A response that ends before its request body: the rest is read and
//     dropped, and cut off with RST_STREAM NO_ERROR (§8.1) past a window
//     or once it stops coming (ExpireLingering, which the caller calls
//     once per body timeout).
//   - Graceful shutdown (§6.8): GOAWAY with the largest id and a PING;
//     once the PING is acknowledged, a GOAWAY with the last stream served.
//
// And the floods it refuses, each with a test: Rapid Reset (CVE-2023-44487:
// a stream counts against SETTINGS_MAX_CONCURRENT_STREAMS until its handler
// is done, however it was reset), MadeYouReset (CVE-2025-8671: resets the
// server makes are charged like the client's, against ResetBudget, which
// completed streams pay back), CONTINUATION floods (CVE-2024-27316: a block
// is bounded in octets, the header list limit and a frame, and in decoded
// size, twice the limit), HPACK bombs (a list over
// MaxHeaderListSize is answered 431 without being kept), SETTINGS and PING
// floods whose acks are never read (MaxQueuedControl), empty frames
// (MaxEmptyFrames), and frames declared larger than allowed.
package http2
