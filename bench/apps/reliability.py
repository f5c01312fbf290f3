"""The app of `make bench-reliability` (bench/reliability), as WSGI (wsgi)
and ASGI (asgi), so m0serve, gunicorn and uvicorn serve the same thing:

    bin/m0serve --app-dir bench/apps reliability:wsgi
    python3 -m uvicorn --app-dir bench/apps reliability:asgi

/big streams 1 GiB in 64 KiB blocks (what a client that never reads
stalls), /upload reads the request body in 64 KiB blocks and discards it,
answering its length; every other request gets "ok" without its body
being read.
"""

from asgi_lifespan import lifespan

BLOCK = b"x" * 65536
BLOCKS = 16384  # 1 GiB


def wsgi(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/big":
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return _stream()
    if path == "/upload":
        body = environ["wsgi.input"]
        size = 0
        while True:
            block = body.read(65536)
            if not block:
                break
            size += len(block)
        answer = b"%d" % size
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(answer)))])
        return [answer]
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


def _stream():
    for _ in range(BLOCKS):
        yield BLOCK


async def asgi(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/big":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream")]})
        for _ in range(BLOCKS):
            await send({"type": "http.response.body", "body": BLOCK, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    answer = b"ok"
    if path == "/upload":
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        answer = b"%d" % size
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(answer))]})
    await send({"type": "http.response.body", "body": answer})
