"""The lifespan half of the raw ASGI apps here, which have nothing to set
up or tear down: every startup and shutdown is acknowledged."""


async def lifespan(receive, send):
    """Answers lifespan messages until the shutdown's."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
