"""A raw ASGI WebSocket echo app for the conformance, interop, browser
and idle-connection tests: it accepts with the first subprotocol the
client offered and sends every message back as it came (text as text,
bytes as bytes; "scope?" gets the scope's http_version, scheme and
path). GET /echo.html serves $E2E_DIR/echo.html (the browser
test's page); other plain HTTP requests get "echo"."""

import os

from asgi_lifespan import lifespan


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] == "http":
        body, kind = b"echo", b"text/plain"
        if scope["path"] == "/echo.html" and "E2E_DIR" in os.environ:
            with open(os.path.join(os.environ["E2E_DIR"], "echo.html"), "rb") as f:
                body, kind = f.read(), b"text/html; charset=utf-8"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # websocket.connect
    offered = scope.get("subprotocols") or [None]
    await send({"type": "websocket.accept", "subprotocol": offered[0]})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("text") == "scope?":
            # How the WebSocket came (RFC 8441 over HTTP/2, or HTTP/1.1).
            await send({"type": "websocket.send", "text": "%s %s %s" % (
                scope["http_version"], scope["scheme"], scope["path"])})
        elif message.get("text") is not None:
            await send({"type": "websocket.send", "text": message["text"]})
        else:
            await send({"type": "websocket.send", "bytes": message["bytes"]})
