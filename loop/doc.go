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
// An inline handler may also accept a WebSocket upgrade
// (ResponseWriter.AcceptWebSocket), or defer the handshake
// (ResponseWriter.DeferWebSocket) to a handler thread that accepts it
// later (Job.AcceptWebSocket) or answers it as any request: the
// connection then carries frames,
// decoded by package ws, and the loop runs the protocol around a
// WebSocketHandler (websocket.go): pings both ways, the close handshake,
// the message size limit, and back-pressure.
package loop
