"""The WebSocket benchmark app of `make bench-ws`, raw ASGI so that the
server's cost is what is measured, not a framework's.

    python3 -m uvicorn --ws websockets --app-dir bench/apps asgi_ws:app

/ echoes every message as it came (text as text, bytes as bytes).
/broadcast is Granian's broadcast app (its benchmarks/ws/app/asgi.py):
every message a client sends goes to every connected client, the
sender included, from the sender's own task: sends from several tasks
meet on one connection with no lock, as in Granian's app (each server
orders them itself). Any other path is refused; HTTP requests get the bare
hello, so the harness can see that the server is up.
"""

import asgi_bare

ACCEPT = {"type": "websocket.accept"}

# The connections on /broadcast: their send callables.
clients = set()


async def echo(receive, send):
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        await send({"type": "websocket.send", "bytes": message.get("bytes"), "text": message.get("text")})


async def broadcast(receive, send):
    clients.add(send)
    try:
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                return
            out = {"type": "websocket.send", "bytes": message.get("bytes"), "text": message.get("text")}
            for client in list(clients):
                await client(out)
    finally:
        clients.discard(send)


async def app(scope, receive, send):
    if scope["type"] == "websocket":
        if (await receive())["type"] != "websocket.connect":
            return
        path = scope["path"]
        if path not in ("/", "/broadcast"):
            await send({"type": "websocket.close", "code": 1008})
            return
        await send(ACCEPT)
        await (echo if path == "/" else broadcast)(receive, send)
        return
    await asgi_bare.app(scope, receive, send)  # HTTP and lifespan
