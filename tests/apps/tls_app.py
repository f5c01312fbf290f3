"""What an app sees of TLS, for tests/tls_test.go: the WSGI app answers
with its environ's scheme and HTTPS/SSL_* entries as JSON, the ASGI app
with its scope's scheme and TLS extension; both echo a request body's
length, and the ASGI app echoes WebSocket messages (wss)."""
import json

from asgi_lifespan import lifespan


def application(environ, start_response):
    out = {k: v for k, v in environ.items() if k == "HTTPS" or k.startswith("SSL_")}
    out["wsgi.url_scheme"] = environ["wsgi.url_scheme"]
    out["body"] = len(environ["wsgi.input"].read())
    data = json.dumps(out).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(data)))])
    return [data]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] == "websocket":
        await receive()
        tls = scope["extensions"].get("tls", {})
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send",
                    "text": json.dumps({"scheme": scope["scheme"], "tls_version": tls.get("tls_version")})})
        while True:
            event = await receive()
            if event["type"] == "websocket.disconnect":
                return
            await send({"type": "websocket.send", "text": event.get("text"), "bytes": event.get("bytes")})
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    out = {"scheme": scope["scheme"], "tls": scope["extensions"].get("tls"), "body": len(body)}
    data = json.dumps(out).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})
