"""A Starlette app for the executor's framework tests."""

import contextlib

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route

done = []


async def hello(request):
    return PlainTextResponse(f"hello {request.path_params['name']}")


async def as_json(request):
    return JSONResponse({"query": dict(request.query_params), "method": request.method,
                         "state": getattr(request.state, "db", None)})


async def body(request):
    data = await request.body()
    return JSONResponse({"length": len(data), "head": data[:8].decode()})


async def stream(request):
    async def numbers():
        for i in range(3):
            yield f"n{i};"
    return StreamingResponse(numbers(), media_type="text/plain")


async def background(request):
    def record():
        done.append(request.query_params["id"])
    return PlainTextResponse("queued", background=BackgroundTask(record))


async def background_done(request):
    return PlainTextResponse(",".join(done))


@contextlib.asynccontextmanager
async def lifespan(app):
    # Lifespan state (Starlette >= 0.26): copied into each request's scope.
    yield {"db": "connected"}


app = Starlette(routes=[
    Route("/hello/{name}", hello),
    Route("/json", as_json),
    Route("/body", body, methods=["POST"]),
    Route("/stream", stream),
    Route("/background", background),
    Route("/background-done", background_done),
], lifespan=lifespan)
