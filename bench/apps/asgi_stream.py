"""The streamed-response row: 16 body messages of 1 KiB each, no
Content-Length, so every server sends it chunked, one chunk per message.

    bin/m0serve --interface asgi --app-dir bench/apps asgi_stream:app
"""

from asgi_lifespan import lifespan

START = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}
CHUNK = {"type": "http.response.body", "body": b"x" * 1024, "more_body": True}
END = {"type": "http.response.body", "body": b""}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    await send(START)
    for _ in range(16):
        await send(CHUNK)
    await send(END)
