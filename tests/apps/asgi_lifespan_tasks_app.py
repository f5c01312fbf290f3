"""A raw ASGI app whose lifespan owns a task it started (as Litestar's
event emitter, a broadcaster's reader or an anyio task group do): at
shutdown the lifespan finds that task still running and ends it itself.
It writes what it found to $E2E_DIR/shutdown."""

import asyncio
import os

OUT = os.environ.get("E2E_DIR", "")


def record(name, text):
    with open(os.path.join(OUT, name), "a") as f:
        f.write(text)


async def ticker():
    while True:
        await asyncio.sleep(3600)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await receive()
        owned = asyncio.get_running_loop().create_task(ticker())
        await send({"type": "lifespan.startup.complete"})
        await receive()
        record("shutdown", "owned task cancelled before shutdown" if owned.done() else "owned task running")
        owned.cancel()
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})
