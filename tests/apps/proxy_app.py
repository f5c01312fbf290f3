"""Answers with the client and scheme the server gave the app, for the
--proxy-headers tests: `app` (WSGI) and `asgi_app` (ASGI)."""
import json


def app(environ, start_response):
    data = json.dumps({"addr": environ["REMOTE_ADDR"], "port": environ["REMOTE_PORT"],
                       "scheme": environ["wsgi.url_scheme"]}).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [data]


async def asgi_app(scope, receive, send):
    if scope["type"] != "http":
        return
    host, port = scope["client"]
    data = json.dumps({"addr": host, "port": str(port), "scheme": scope["scheme"]}).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})
