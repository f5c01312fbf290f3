"""Plain ASGI apps for the end-to-end spec checks (ASGI 3.0 HTTP and
lifespan). What a task saw after its response goes to files under
$E2E_DIR for the test to read."""

import os

from asgi_lifespan import lifespan

OUT = os.environ.get("E2E_DIR", "")


def record(name, text):
    with open(os.path.join(OUT, name), "a") as f:
        f.write(text)


async def start(send, status=200, headers=()):
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), *headers]})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    path = scope["path"]
    name = scope["query_string"].decode()
    if path == "/ordered":
        await start(send)
        await send({"type": "http.response.body", "body": b"in order"})
    elif path == "/body-first":
        # Body before start: the app's error, and nothing was sent: 500.
        await send({"type": "http.response.body", "body": b"too soon"})
    elif path == "/no-response":
        return
    elif path == "/pieces":
        # more_body: every piece arrives, and only the last one ends it.
        await start(send)
        for piece in (b"one;", b"", b"two;"):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"three", "more_body": False})
    elif path == "/fail-midway":
        await start(send)
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        raise RuntimeError("m0 failed after the head")
    elif path == "/request-pieces":
        # Reports each http.request message's body length and more_body.
        seen = []
        while True:
            message = await receive()
            seen.append(f"{len(message['body'])}:{message.get('more_body', False)}")
            if not message.get("more_body", False):
                break
        await start(send)
        await send({"type": "http.response.body", "body": ",".join(seen).encode()})
    elif path == "/disconnect-after":
        # Once the response is done, receive says the client is gone.
        message = await receive()
        assert message["type"] == "http.request"
        await start(send)
        await send({"type": "http.response.body", "body": b"done"})
        message = await receive()
        record(name, message["type"])
    elif path == "/wait-disconnect":
        # A long poll: it sends nothing and waits for the client to leave
        # (a client gone before the task started gets http.disconnect
        # first, as under uvicorn).
        message = await receive()
        if message["type"] == "http.request":
            message = await receive()
        record(name, message["type"])
    elif path == "/trailers":
        # Trailers in two messages (more_trailers), announced in a Trailer
        # field; content-type is a field RFC 9110 §6.5.1 keeps out of
        # trailers, which the server drops.
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain"), (b"trailer", b"x-checksum, x-count")],
                    "trailers": True})
        await send({"type": "http.response.body", "body": b"with trailers", "more_body": False})
        await send({"type": "http.response.trailers", "more_trailers": True,
                    "headers": [(b"x-checksum", b"1"), (b"content-type", b"text/html")]})
        await send({"type": "http.response.trailers", "headers": [(b"x-count", b"2")]})
    elif path == "/pathsend":
        # The http.response.pathsend extension: this file, sent by path.
        await start(send, 200, [(b"content-length", b"%d" % os.path.getsize(__file__))])
        await send({"type": "http.response.pathsend", "path": os.path.abspath(__file__)})
    else:
        await start(send, 404)
        await send({"type": "http.response.body", "body": b"not found"})


async def failing_startup(scope, receive, send):
    if scope["type"] == "lifespan":
        message = await receive()
        assert message["type"] == "lifespan.startup"
        await send({"type": "lifespan.startup.failed", "message": "m0 database unreachable"})
        return
    await start(send)
    await send({"type": "http.response.body", "body": b"served without lifespan"})


async def raising_lifespan(scope, receive, send):
    if scope["type"] == "lifespan":
        raise ValueError("m0 no lifespan here")
    await start(send)
    await send({"type": "http.response.body", "body": b"served despite lifespan"})


class ASGI2App:
    """An ASGI 2 (double-callable) app: the class is called with the scope,
    the instance with receive and send."""

    def __init__(self, scope):
        self.scope = scope

    async def __call__(self, receive, send):
        if self.scope["type"] != "http":
            return
        await start(send)
        await send({"type": "http.response.body", "body": b"asgi2 " + self.scope["path"].encode()})
