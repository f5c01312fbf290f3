"""Requests that stay in the app, for the shutdown tests: /sleep?s=N
sleeps N seconds (time.sleep in the WSGI app and in asgi_blocking, which
holds its event loop; asyncio.sleep in asgi_app), /ok answers at once.
Each request says on stderr when it is inside the app."""
import asyncio
import sys
import time
from urllib.parse import parse_qs

from asgi_lifespan import lifespan


def _seconds(query):
    return float(parse_qs(query).get("s", ["0"])[0])


def _inside(path):
    sys.stderr.write("m0test: inside %s\n" % path)
    sys.stderr.flush()


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/sleep":
        _inside(path)
        time.sleep(_seconds(environ.get("QUERY_STRING", "")))
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "4")])
    return [b"done"]


async def _asgi(scope, receive, send, block):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["path"] == "/sleep":
        _inside(scope["path"])
        seconds = _seconds(scope["query_string"].decode())
        if block:
            time.sleep(seconds)
        else:
            await asyncio.sleep(seconds)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"4")]})
    await send({"type": "http.response.body", "body": b"done"})


async def asgi_app(scope, receive, send):
    await _asgi(scope, receive, send, False)


async def asgi_blocking(scope, receive, send):
    await _asgi(scope, receive, send, True)
