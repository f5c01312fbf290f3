"""The ASGI app of tests/http_test.go: routes that stream a body of
unknown length, set the response fields the server used to own
(Connection, hop-by-hop fields, Server, Date) and report the scope."""
import json

from asgi_lifespan import lifespan


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    path = scope["path"]
    headers = [(b"content-type", b"text/plain")]
    if path == "/stream":
        # As Starlette's StreamingResponse: no length; for HEAD, no body.
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if scope["method"] == "HEAD":
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.body", "body": b"one ", "more_body": True})
        await send({"type": "http.response.body", "body": b"two"})
        return
    if path == "/close":
        headers.append((b"connection", b"close"))
    elif path == "/hop":
        headers += [(b"keep-alive", b"timeout=5"), (b"upgrade", b"h2c"), (b"x-kept", b"yes")]
    elif path == "/own-server":
        headers += [(b"server", b"app-server/1.0"), (b"date", b"Thu, 01 Jan 2026 00:00:00 GMT"),
                    (b"x-frame-options", b"SAMEORIGIN")]
    body = path.encode() + b"\n"
    if path.endswith("/scope"):
        body = json.dumps({"path": scope["path"], "root_path": scope["root_path"],
                           "type": scope["type"]}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
