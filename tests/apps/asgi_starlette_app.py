"""A Starlette app for the end-to-end ASGI tests.

Side effects the tests read back go to files under $E2E_DIR: a background
task's, a server-sent-event stream's finally clause, lifespan shutdown.
"""

import asyncio
import contextlib
import hashlib
import os

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.responses import (FileResponse, JSONResponse, PlainTextResponse,
                                 StreamingResponse)
from starlette.routing import Route

OUT = os.environ.get("E2E_DIR", "")


def record(name, text):
    with open(os.path.join(OUT, name), "a") as f:
        f.write(text)


async def home(request):
    return PlainTextResponse("starlette says hi")


async def item(request):
    return JSONResponse({"id": request.path_params["id"], "q": request.query_params.get("q")})


async def state(request):
    # Lifespan state, copied into each request's scope.
    return JSONResponse({"greeting": request.state.greeting})


async def body(request):
    data = await request.body()
    return JSONResponse({"length": len(data), "sha256": hashlib.sha256(data).hexdigest()})


async def stream(request):
    digest, length, pieces, largest = hashlib.sha256(), 0, 0, 0
    async for piece in request.stream():
        digest.update(piece)
        length += len(piece)
        pieces += 1
        largest = max(largest, len(piece))
    return JSONResponse({"length": length, "sha256": digest.hexdigest(),
                         "pieces": pieces, "largest": largest})


async def form(request):
    data = await request.form()
    fields = {}
    for key, value in data.multi_items():
        if hasattr(value, "read"):
            content = await value.read()
            fields[key] = {"filename": value.filename, "content": content.decode()}
        else:
            fields[key] = value
    return JSONResponse(fields)


async def streaming(request):
    async def parts():
        for i in range(5):
            yield f"part {i}\n"
            await asyncio.sleep(0)
    return StreamingResponse(parts(), media_type="text/plain")


async def background(request):
    name = request.query_params["name"]

    async def later():
        await asyncio.sleep(0.05)
        record(name, "background ran")
    return PlainTextResponse("queued", background=BackgroundTask(later))


async def source_file(request):
    return FileResponse(__file__, media_type="text/x-python")


class RecordedStream(StreamingResponse):
    """A StreamingResponse whose own finally records that it ended.

    The finally sits around the response, not inside the body's async
    generator: when the server cancels the stream while the task waits in
    send(), the generator is left suspended at its yield and its finally
    runs only when CPython finalizes it, which anyio's reference cycles can
    put off until a garbage collection that an idle server never triggers.
    The response's finally runs as the cancellation unwinds, every time."""

    def __init__(self, body, name, **kwargs):
        super().__init__(body, **kwargs)
        self.name = name

    async def __call__(self, scope, receive, send):
        try:
            await super().__call__(scope, receive, send)
        finally:
            record(self.name, "finally ran")


async def events(request):
    name = request.query_params["name"]

    async def ticks():
        i = 0
        while True:
            yield f"data: tick {i}\n\n"
            i += 1
            await asyncio.sleep(0.02)
    return RecordedStream(ticks(), name, media_type="text/event-stream")


# Files of requests that asked to see lifespan shutdown's place in order.
watchers = []


async def sleep(request):
    name = request.query_params.get("name")
    if name:
        watchers.append(name)
        record(name, "started;")
    await asyncio.sleep(float(request.query_params.get("s", "0.5")))
    if name:
        record(name, "done;")
    return PlainTextResponse("slept")


async def big(request):
    megabytes = int(request.query_params["mb"])
    chunk = b"x" * (1 << 20)

    async def chunks():
        for _ in range(megabytes):
            yield chunk
    return StreamingResponse(chunks(), media_type="application/octet-stream")


@contextlib.asynccontextmanager
async def lifespan(app):
    yield {"greeting": "hello from lifespan"}
    if OUT:
        record("shutdown", "shutdown;")
        for name in watchers:
            record(name, "shutdown;")


app = Starlette(routes=[
    Route("/", home),
    Route("/items/{id:int}", item),
    Route("/state", state),
    Route("/body", body, methods=["POST"]),
    Route("/stream", stream, methods=["POST"]),
    Route("/form", form, methods=["POST"]),
    Route("/streaming", streaming),
    Route("/background", background),
    Route("/file", source_file),
    Route("/events", events),
    Route("/sleep", sleep),
    Route("/big", big),
], lifespan=lifespan)
