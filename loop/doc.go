// Package loop is m0serve's event loop, independent of the I/O backend
// under it (io_uring, epoll, kqueue: see Backend).
//
// One Loop runs on one locked OS thread. It creates its backend on that
// thread (io_uring's SINGLE_ISSUER), owns every socket and the slot table,
// and turns in passes: one Backend.Wait submits what was queued and waits;
// the batch of completions is handled together; every complete request in
// a receive buffer is parsed in place and answered in order (pipelining);
// then each connection gets at most one send carrying all its ready
// responses. Deadlines (header read, keep-alive idle, body stall) are
// stamps swept once a second; nothing arms a timer per request. The
// steady-state request path allocates nothing (TestPassAllocatesNothing,
// TestDeferredPathAllocatesNothing).
//
// Handlers come in two shapes, chosen per request by Handler.ServeInline:
//
//   - Inline: answer on the loop thread through ResponseWriter (AddHeader,
//     Respond). It must not block. The request's spans point into the
//     receive buffer and are valid only during the call; the body is not
//     seen (it is read and dropped).
//   - Deferred: call ResponseWriter.Defer. The loop copies the head into a
//     Job and puts it on the Config's JobQueue; a handler thread takes it
//     (JobQueue.Take, TryTake), streams the body with Job.Read (the first
//     Read sends "100 Continue" when the client asked), answers with
//     SetHeader, WriteHeader and Write (blocking while the client is slow:
//     back-pressure), optionally adds trailer fields with SetTrailer (sent
//     after a chunked body, dropped otherwise), and ends with Finish or
//     Abort. News goes back to the
//     loop through a ring and a Wake that is paid only when the loop has
//     said it is about to wait.
//
// See Example for both shapes side by side.
//
// The protocols over that core:
//
//   - HTTP/1.1 (package http1 parses and encodes; conn.go runs a
//     connection's state machine, head.go builds every response head).
//   - HTTP/2 (Config.HTTP2; package http2 holds the protocol and its
//     limits): h2c by prior knowledge, h2 where TLS's ALPN chose it. The
//     slot holds the connection's codec; each stream becomes a Job that
//     handlers answer exactly as an HTTP/1.1 request's (http2*.go).
//   - TLS (Config.TLS): the loop moves ciphertext; the slot's TLS room
//     (package loop/tls, over package tlsrec) holds the connection's TLS
//     state, opens and seals records, and runs its handshake on a
//     goroutine whose end reaches the loop as a note (tls.go's hooks).
//   - WebSockets, over HTTP/1.1 upgrades and HTTP/2's extended CONNECT
//     (RFC 8441): an inline handler accepts the upgrade
//     (ResponseWriter.AcceptWebSocket) or defers the handshake
//     (ResponseWriter.DeferWebSocket) to a handler thread that accepts it
//     later (Job.AcceptWebSocket) or answers it as any request; frames are
//     decoded by package ws, and the loop runs the protocol around a
//     WebSocketHandler: pings both ways, the close handshake, the message
//     size limit, and back-pressure (websocket*.go).
//
// Config.Stepper lets the loop drive another event loop in every pass (an
// ASGI app's asyncio loop), so a request it answers at once goes out in
// the same pass; Loop.Kick wakes the loop for its news. Config.Realtime
// lets a deferred response hold its connection as a server-sent event
// stream or a WebSocket the loop feeds from published frames, with no
// handler thread (hold*.go).
package loop
