"""The realtime tests' ASGI app: a stream held with M0-Hold, and a view
that publishes through scope["state"]["m0"]."""


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
    if path.startswith("/events/"):
        headers = [(b"content-type", b"text/event-stream"), (b"m0-hold", b"stream"),
                   (b"m0-channel", path[len("/events/"):].encode()), (b"x-worker", b"asgi")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b": connected\n\n"})
        return
    m0 = scope.get("state", {}).get("m0")
    channel = path[len("/publish/"):]
    event_id = m0.publish(channel, b"data: " + scope["query_string"] + b"\n\n") if m0 else -1
    body = b"%d\n" % event_id
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": body})
