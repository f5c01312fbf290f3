"""A plain ASGI 3 app (no framework): m0serve --app-dir examples hello_asgi:app

Routes:
  GET  /            "Hello, World!"
  GET  /stream      ten numbered lines, sent one body message each
                    (chunked: no Content-Length)
  POST /echo        the request body, read as it arrives
anything else       404
"""

import asyncio


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    path, method = scope["path"], scope["method"]
    if path == "/" and method in ("GET", "HEAD"):
        await respond(send, 200, b"Hello, World!\n")
    elif path == "/stream" and method == "GET":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain")]})
        for i in range(10):
            await send({"type": "http.response.body",
                        "body": b"line %d\n" % i, "more_body": True})
            await asyncio.sleep(0)  # lets other tasks run between pieces
        await send({"type": "http.response.body", "body": b""})
    elif path == "/echo" and method == "POST":
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await respond(send, 200, bytes(body), b"application/octet-stream")
    else:
        await respond(send, 404, b"Not Found\n")


async def respond(send, status, body, content_type=b"text/plain"):
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type),
                            (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


async def lifespan(receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
