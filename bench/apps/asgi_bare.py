"""The bare ASGI benchmark app: the equivalent of wsgi_bare.py for ASGI
servers (uvicorn's arm of `make bench-python`).

    python3 -m uvicorn --app-dir bench/apps asgi_bare:app

Every HTTP request gets the same 13-byte body with two headers, sent as
one start and one body message; the messages are built once, at import.
Lifespan events are acknowledged so servers that send them start cleanly.
"""

from asgi_lifespan import lifespan

BODY = b"Hello, World!"
START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(BODY))],
}
RESPONSE_BODY = {"type": "http.response.body", "body": BODY}


async def app(scope, receive, send):
    if scope["type"] == "http":
        await send(START)
        await send(RESPONSE_BODY)
        return
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
