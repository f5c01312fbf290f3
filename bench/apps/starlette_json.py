"""The Starlette benchmark app: one route returning a small JSON object,
the row of `make bench-python` where Starlette's routing, Request and
JSONResponse are in every request.

    bin/m0serve --interface asgi --loop uvloop --app-dir bench/apps starlette_json:app

GET / answers {"message":"Hello, World!"} (JSONResponse renders compact
JSON, no trailing newline) with Content-Type application/json.
"""
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route


async def hello(request):
    return JSONResponse({"message": "Hello, World!"})


app = Starlette(routes=[Route("/", hello)])
