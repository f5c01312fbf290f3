"""The smallest useful ASGI app, for the executor's benchmarks: one body
message of known length and two headers. Also the object counts the leak
test reads."""

import gc
import sys

START = {"type": "http.response.start", "status": 200,
         "headers": [(b"content-type", b"text/plain"), (b"content-length", b"13")]}
BODY = {"type": "http.response.body", "body": b"Hello, World!"}


async def app(scope, receive, send):
    await send(START)
    await send(BODY)


async def objects(scope, receive, send):
    gc.collect()
    body = b"%d %d" % (len(gc.get_objects()), sys.getallocatedblocks())
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def echo(scope, receive, send):
    """Reads the body piece by piece and streams each piece back."""
    await send(START_STREAM)
    while True:
        m = await receive()
        await send({"type": "http.response.body", "body": m["body"], "more_body": m["more_body"]})
        if not m["more_body"]:
            return


START_STREAM = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}
