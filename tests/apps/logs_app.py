"""Apps whose failures the server logs: /raise raises in the WSGI app
and in the ASGI app; the ASGI app also raises on the lifespan scope
(which the server reports as lifespan unsupported)."""


def app(environ, start_response):
    if environ["PATH_INFO"] == "/raise":
        raise KeyError("m0test raised in the WSGI app")
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


async def asgi_app(scope, receive, send):
    if scope["type"] != "http":
        raise RuntimeError("m0test: no lifespan here")
    if scope["path"] == "/raise":
        raise KeyError("m0test raised in the ASGI app")
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})
