"""The TechEmpower plaintext and json tests as an ASGI 3 app (no
framework): m0serve app_asgi:app. The json test's object is made and
serialised for every request, as the rules require."""
import json

PLAINTEXT = b"Hello, World!"
TEXT = [(b"content-type", b"text/plain"), (b"content-length", b"13")]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    path = scope["path"]
    if path == "/plaintext":
        await send({"type": "http.response.start", "status": 200, "headers": TEXT})
        await send({"type": "http.response.body", "body": PLAINTEXT})
    elif path == "/json":
        body = json.dumps({"message": "Hello, World!"}, separators=(",", ":")).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
    else:
        await send({"type": "http.response.start", "status": 404,
                    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"9")]})
        await send({"type": "http.response.body", "body": b"Not Found"})
