"""The app of pybridge/asgi_concurrent_send_test.go: tasks that send on
one connection at once, each awaiting its own sends. /stream streams a
body from two tasks; /gone does the same to a client that leaves, and
/seen answers what those sends raised (or what /empty-end saw). A
WebSocket sends from four tasks per client message, then closes; /late
makes its sends without awaiting them and closes at once."""

import asyncio

TASKS, PIECES = 4, 8
seen = []


async def stream(send, tag, out):
    for i in range(PIECES):
        try:
            await send({"type": "http.response.body", "body": b"%s%d." % (tag, i), "more_body": True})
        except OSError as e:
            out.append(type(e).__name__)
            return


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] == "http":
        if scope["path"] == "/seen":
            # The test asks once the response has ended, which can be
            # before the task that ended it has run its next line: a new
            # request's first step runs at once (eager start).
            for _ in range(5000):
                if seen:
                    break
                await asyncio.sleep(0.001)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": " ".join(seen).encode()})
            return
        seen.clear()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if scope["path"] == "/empty-end":
            # The empty last body message made while a piece is being
            # written: it completes after that piece, and ends the body.
            piece = send({"type": "http.response.body", "body": b"piece", "more_body": True})
            await send({"type": "http.response.body"})
            seen[:] = ["piece-done" if piece.done() else "piece-pending"]
            await piece
            return
        out = []
        await asyncio.gather(stream(send, b"a", out), stream(send, b"b", out))
        if scope["path"] == "/gone":
            seen[:] = out
            return
        await send({"type": "http.response.body", "body": b"end"})
        return
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    m = await receive()

    def message(t, i):
        return {"type": "websocket.send", "text": "%s %d %d" % (m["text"], t, i)}

    if scope["path"] == "/late":
        # Every send made, none awaited (send returns an awaitable): the
        # close comes while they wait, and goes out after the last.
        sends = [send(message(t, i)) for i in range(PIECES) for t in range(TASKS)]
        await send({"type": "websocket.close", "code": 4001})
        await asyncio.gather(*sends)
        return

    async def sender(t):
        for i in range(PIECES):
            await send(message(t, i))

    await asyncio.gather(*(sender(t) for t in range(TASKS)))
    await send({"type": "websocket.close", "code": 4001})
