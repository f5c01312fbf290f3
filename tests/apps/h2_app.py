"""The WSGI and ASGI apps of tests/http2_test.go: /size/N answers N bytes
in pieces of 64 KiB (a streamed body of unknown length), anything else
the request as the app saw it, with its body's length and SHA-256."""
import hashlib
import json

from asgi_lifespan import lifespan

PIECE = b"0123456789abcdef" * 4096


def pieces(n):
    while n > 0:
        yield PIECE[:min(n, len(PIECE))]
        n -= len(PIECE)


def application(environ, start_response):
    path = environ["PATH_INFO"]
    if path.startswith("/size/"):
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return pieces(int(path[len("/size/"):]))
    digest, length = hashlib.sha256(), 0
    stream = environ["wsgi.input"]
    while True:
        block = stream.read(65536)
        if not block:
            break
        digest.update(block)
        length += len(block)
    out = {"protocol": environ["SERVER_PROTOCOL"], "method": environ["REQUEST_METHOD"], "path": path,
           "host": environ.get("HTTP_HOST"), "cookie": environ.get("HTTP_COOKIE"),
           "scheme": environ["wsgi.url_scheme"], "length": length, "sha256": digest.hexdigest()}
    data = json.dumps(out).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    path = scope["path"]
    if path.startswith("/size/"):
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream")]})
        for piece in pieces(int(path[len("/size/"):])):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    digest, length = hashlib.sha256(), 0
    while True:
        event = await receive()
        body = event.get("body", b"")
        digest.update(body)
        length += len(body)
        if not event.get("more_body"):
            break
    headers = dict(scope["headers"])
    out = {"protocol": scope["http_version"], "method": scope["method"], "path": path,
           "host": headers.get(b"host", b"").decode(), "cookie": headers.get(b"cookie", b"").decode(),
           "scheme": scope["scheme"], "length": length, "sha256": digest.hexdigest()}
    data = json.dumps(out).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})
