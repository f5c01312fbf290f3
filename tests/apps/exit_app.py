"""An app that leaves a request with sys.exit() or KeyboardInterrupt.

Both are BaseException, not Exception: the server must answer 500, log
the traceback and keep serving, not stop (issue 15, item 1)."""

import sys


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/exit":
        sys.exit(1)
    if path == "/interrupt":
        raise KeyboardInterrupt
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


async def asgi(scope, receive, send):
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/exit":
        sys.exit(1)
    if path == "/interrupt":
        raise KeyboardInterrupt
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})
