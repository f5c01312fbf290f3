"""A raw ASGI WebSocket echo app for the conformance, interop, browser
and idle-connection tests: it accepts with the first subprotocol the
client offered and sends every message back as it came (text as text,
bytes as bytes). Plain HTTP requests get "echo"."""


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"echo"})
        return
    await receive()  # websocket.connect
    offered = scope.get("subprotocols") or [None]
    await send({"type": "websocket.accept", "subprotocol": offered[0]})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("text") is not None:
            await send({"type": "websocket.send", "text": message["text"]})
        else:
            await send({"type": "websocket.send", "bytes": message["bytes"]})
