"""The app of tests/asgi_concurrent_send_test.go: tasks that send on one
connection at once, with no lock (uvicorn and Granian take that).

ws /tasks: for each client message, four tasks send 25 messages each.
ws /broadcast: Granian's broadcast benchmark app: each message a client
sends goes to every connected client, the sender included, from each
sender's own task.
http /stream: two tasks send 50 body chunks each.
"""

import asyncio

clients = set()


async def tasks(receive, send):
    while True:
        m = await receive()
        if m["type"] != "websocket.receive":
            return

        async def sender(t):
            for i in range(25):
                await send({"type": "websocket.send", "text": "%s %d %d" % (m["text"], t, i)})

        await asyncio.gather(*(sender(t) for t in range(4)))


async def broadcast(receive, send):
    clients.add(send)
    try:
        while True:
            m = await receive()
            if m["type"] != "websocket.receive":
                return
            for client in list(clients):
                await client({"type": "websocket.send", "text": m["text"]})
    finally:
        clients.discard(send)


async def stream(send):
    await send({"type": "http.response.start", "status": 200, "headers": []})

    async def chunks(tag):
        for i in range(50):
            await send({"type": "http.response.body", "body": b"%s%02d;" % (tag, i), "more_body": True})

    await asyncio.gather(chunks(b"a"), chunks(b"b"))
    await send({"type": "http.response.body", "body": b"end"})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] == "http":
        await stream(send)
        return
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    await (tasks if scope["path"] == "/tasks" else broadcast)(receive, send)
