"""The upload row: every request's body is read whole and its length
answered, so the server's cost of taking in 1 MiB is what is measured.

    bin/m0serve --interface asgi --app-dir bench/apps asgi_upload:app
"""

from asgi_lifespan import lifespan

START = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    size = 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    await send(START)
    await send({"type": "http.response.body", "body": b"%d" % size})
