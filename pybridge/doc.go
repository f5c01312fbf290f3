// Package pybridge runs Python web applications in-process: an embedded
// CPython (3.10 or newer) and a C shim that serves PEP 3333 (WSGI) apps
// with one cgo call per request, and ASGI 3.0 apps (HTTP, WebSocket and
// lifespan) on one thread running an event loop.
//
// # Shape
//
// Start initialises the interpreter on a thread of its own (no Python
// signal handlers; SIGPIPE ignored). LoadApp imports "module:attr" (a
// bare "module": its application, else its app; a function taking no
// arguments only as a factory) and builds the app's environ template;
// its Interface says WSGI or ASGI.
// StartHandlers runs N handler threads, each a goroutine locked to its OS
// thread with one Python thread state for life. A handler takes a batch of
// Jobs from a JobSource, holds the GIL across the batch, and releases it
// only to park (empty source) or to block (a body read waiting for the
// client, a BodyWriter waiting for room). AttachInline instead gives the
// caller's own locked thread a thread state (the server's loop thread, for
// --threads 0): Inline.Serve runs a job without Body or Writer there,
// taking the GIL for the call only. Close finalises Python once every
// handler group and inline thread has ended.
//
// # One request
//
// A Job carries the request as spans into its head bytes (Request, filled
// from an http1.Request by FromHTTP1), a BodyReader, an optional
// BodyWriter and a Response arena. The C side builds the environ from the
// template (PyDict_Copy; interned keys; HTTP_* keys cached by raw header
// name; latin-1 values), calls the app, validates start_response, and
// writes status, headers and body into the arena, which is C memory: no
// Python object and no Go pointer crosses. Then the Completer gets the job.
//
// Outcomes (Response.Outcome):
//   - Complete: status, headers and the whole body are in the arena
//     (ContentLength known), or the body is a file (Response.File) from a
//     wsgi.file_wrapper over a regular file, for sendfile.
//   - Streamed: the body went to the BodyWriter (WriteHead at the first
//     body byte, then a Write per block); the server ends the framing.
//   - Aborted: the head went out, then the app failed or the client left;
//     close the connection without a valid end.
//
// An app error before the head is final gives Complete with the bridge's
// plain 500 (AppError true; traceback on sys.stderr).
//
// # ASGI
//
// StartASGI runs one handler thread with an event loop (uvloop when it
// imports under LoopAuto) and returns once lifespan startup is over; a
// *StartupError carries the app's message. ASGI 2 apps (double-callable)
// are taken by uvicorn's rule, which LoadApp reports as WSGI: choose the
// executor by configuration, not by Interface alone. The executor takes
// jobs from a NotifySource on its own thread; when the source runs dry it
// arms a notification that writes an eventfd the event loop watches, and
// one wake delivers every finished body read and write and spawns every
// job queued since the last. Each job is one task whose coroutine is
// C's (asgi_task.c) around the app's; receive and send are methods of one
// C object per request (asgi_request.c, on asgi_conn.c's plumbing), which
// owns the request's protocol. asgi_executor.py is only the loop's main
// coroutine and lifespan. Jobs, Response and Completer are the WSGI ones;
// the differences:
//   - One http.response.body is Complete with its length (over
//     BufferLimit with a Writer it streams); several go to the Writer
//     piece by piece (Streamed). The Writer is a Port: it takes
//     each piece without blocking, on the executor's thread; the send
//     awaits the server's Written when the piece filled its outbox:
//     that wait is the back-pressure, and no thread blocks on it.
//   - Response.Reason is empty: write http1.StatusText for the status.
//   - http.response.pathsend is Response.File; trailers go to the Port.
//   - The request body is read in pieces of up to 64 KiB as receive asks.
//     The Body is a TryReader, read on the executor's thread without
//     blocking: a receive that finds nothing awaits the server's
//     Readable. Nothing on the Python side blocks, and no goroutine
//     stands between it and the server (asgi_slot.go).
//   - Completion may come before the task ends (a background task runs
//     on); the job is not touched after it.
//   - ClientGone(j): receive returns http.disconnect and send raises.
//     ClientInputEnded(j) (a half-close): receive after the body returns
//     http.disconnect, send goes on.
//
// Hops, counted as calls that cross a language, a goroutine, a thread or
// the wake descriptor (issue 29 aimed at about five).
//   - A streamed send whose piece the output has room for: send (C) ->
//     m0goASGIWrite (Go) -> Port.Post, which copies it, and back: three,
//     the send done with no future made (asgi_conn.c's start_write), as a
//     transport's write is; the loop thread's pass moves the bytes.
//     Before the port: send (C) -> m0goASGIWrite -> the slot's writer
//     goroutine -> BodyWriter.Write -> (the loop's pass) -> post ->
//     eventfd -> _m0asgi.wake (C) -> deliver (Go) ->
//     m0_asgi_resume_write (C) -> set_result: ten (fourteen while Python
//     held the send state machine).
//   - One that fills the output waits for the loop thread's pass:
//     Written (OnJobWritten) -> post -> eventfd -> _m0asgi.wake (C) ->
//     deliver (Go) -> m0_asgi_resume_write (C) -> set_result: nine with
//     the ones above, as before; driven, the post and the eventfd go:
//     seven.
//   - A body piece already in when receive asks: receive (C) ->
//     m0goASGIRead (Go) -> TryRead -> m0_asgi_resume_read (C) ->
//     set_result: four, the future done before the app awaits it. One
//     not in yet: TryRead says pending; the loop thread's pass ->
//     Readable (OnJobReadable) -> post -> eventfd -> _m0asgi.wake (C) ->
//     deliver (Go), TryRead again -> m0_asgi_resume_read (C) ->
//     set_result: eight; driven six. Before TryReader, a reader goroutine
//     woken by the pass: nine.
//   - Telling a task its client left: ClientGone -> post -> eventfd ->
//     _m0asgi.wake (C) -> deliver (Go) -> m0_asgi_client_gone (C) ->
//     set_result of the waiting receive's future -> the app: seven;
//     driven (a flag the loop thread's next Step reads) five.
//
// Driven (ASGIOptions.Driven, the server's --asgi-thread loop): after
// startup the event loop, asyncio's, has no thread of its own. The
// server's loop thread calls Step once per pass, after the pass's
// completions: it spawns the jobs the pass queued and runs one iteration
// of the loop (its _run_once), so a request the app answers without
// suspending goes out in the pass that parsed it: no eventfd, no wake in
// either direction. A streamed piece is posted there (Port.Post) and its
// send is over at once; while the app's tasks post pieces, the Step runs
// the event loop again (up to 32 rounds), so the pieces of a response
// meet in one send. A piece that fills the output resumes after
// Written, called on the loop thread itself; what goroutines post
// (WebSocket messages, ClientGone) raises a flag and kicks the loop
// (loop.Stepper's Pending).
// The loop's timers become the loop thread's wait deadline; its own
// descriptors (the app's sockets, its self-pipe) are watched by a
// goroutine polling the selector's epoll descriptor. LeaveLoop, on the
// loop thread as it ends, hands the event loop back to Stop.
//
// A job whose Request.WebSocket is set runs as the websocket scope (spec
// 2.5). Its receive says websocket.connect, then the client's messages,
// then websocket.disconnect (the client's code; repeated). websocket.accept
// calls the Port's AcceptWebSocket with the subprotocol (one the client
// offered) and the headers, and the job completes Upgraded; the server then
// reports messages and the close through WebSocketEvents (posted like a
// body read, each held untaken until a receive takes it: the server's
// back-pressure) and takes sends through WebSocketConn, posted (a send
// past the connection's high-water mark awaits the conn's written call).
// A close before accept is a 403, websocket.http.response.* the
// app's own answer, an exception before accept a 500; after accept an
// exception closes 1011 and a return 1000, and a send once closed raises
// ClientDisconnected, not logged as the app's error.
//
// Stop: close the source, then Stop; jobs not started get 503, running
// tasks are cancelled (for up to CancelTimeout; 503 if nothing was sent,
// else Aborted), lifespan shutdown runs. Stop before Interpreter.Close.
//
// ARCHITECTURE.md at the repository's root follows one request through
// the server and this package.
package pybridge
