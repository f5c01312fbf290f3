"""The WebSocket app of pybridge/asgi_websocket_test.go: it accepts with
the client's last subprotocol and a header naming the scope's scheme,
echoes text with a prefix, and on the disconnect sends its code and
reason, which must raise (the connection is closed), then closes, which
must raise too: the test's fake sees neither. An HTTP request answers
what the last disconnect saw. /not-a-mapping sends None, as HTTP and as
WebSocket, and records the error."""

seen = []


async def app(scope, receive, send):
    if scope["type"] == "http" and scope["path"] == "/not-a-mapping":
        try:
            await send(None)
        except Exception as e:
            seen[:] = [type(e).__name__]
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": " ".join(seen).encode()})
        return
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    assert scope["type"] == "websocket"
    seen.clear()
    assert (await receive())["type"] == "websocket.connect"
    if scope["path"] == "/not-a-mapping":
        # What send makes of a message that is no mapping: the HTTP
        # request's error (asgi_websocket_test.go).
        try:
            await send(None)
        except Exception as e:
            seen.append(type(e).__name__)
        await send({"type": "websocket.close"})
        return
    await send({"type": "websocket.accept", "subprotocol": scope["subprotocols"][-1],
                "headers": [(b"x-scheme", scope["scheme"].encode())]})
    while True:
        m = await receive()
        if m["type"] == "websocket.disconnect":
            assert await receive() == m
            seen.extend([str(m["code"]), m["reason"]])
            for late in ({"type": "websocket.send", "text": "too late"}, {"type": "websocket.close"}):
                try:
                    await send(late)
                except OSError as e:
                    seen.append(type(e).__name__)
            return
        await send({"type": "websocket.send", "text": "echo " + m["text"]})
