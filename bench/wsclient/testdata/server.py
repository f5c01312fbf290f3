"""A WebSocket server of Debian's python3-websockets, an implementation
other than the client's, for the tests of wsclient and of the harness's
WebSocket runs. It listens on the port given (any free one without),
prints it, then serves by path:

/echo       echoes every message as it came
/broadcast  sends every message to every client on /broadcast
/fragments  sends "one", "two", "three" as one fragmented text message
/ping       pings, and once the pong is back sends "pong seen"
/close      closes with code 4000
"""

import asyncio
import sys

import websockets

clients = set()


async def handler(ws, path):
    if path == "/echo":
        async for message in ws:
            await ws.send(message)
    elif path == "/broadcast":
        clients.add(ws)
        try:
            async for message in ws:
                for client in list(clients):
                    await client.send(message)
        finally:
            clients.discard(ws)
    elif path == "/fragments":
        await ws.send(iter(["one", "two", "three"]))
        await ws.wait_closed()
    elif path == "/ping":
        await asyncio.wait_for(await ws.ping(b"probe"), 10)
        await ws.send("pong seen")
        await ws.wait_closed()
    elif path == "/close":
        await ws.close(4000, "bye")


async def main(port):
    async with websockets.serve(handler, "127.0.0.1", port, compression=None, max_size=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()


asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
