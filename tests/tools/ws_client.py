"""WebSocket checks with websockets' asyncio client (tests/.venv, as
pinned in tests/requirements.txt), run by tests/websocket_test.go against
m0serve: one line per check, "name ok" or "name FAIL detail"."""

import asyncio
import sys

import websockets
from websockets.asyncio.client import connect


async def main(url):
    results = []

    def check(name, ok, detail=""):
        results.append(f"{name} {'ok' if ok else 'FAIL ' + detail}")

    async with connect(url, compression="deflate", max_size=None) as ws:
        extensions = ws.response.headers.get("Sec-WebSocket-Extensions", "")
        check("deflate-negotiated", extensions.startswith("permessage-deflate"), extensions)
        big = "m0serve " * 20000
        await ws.send(big)
        check("deflate-echo", await ws.recv() == big)

        async def fragments():
            for part in ("frag", "mented ", "text"):
                yield part
        await ws.send(fragments())
        check("fragmented", await ws.recv() == "fragmented text")

        await ws.send(b"\x00\xffbinary")
        check("binary", await ws.recv() == b"\x00\xffbinary")

        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 10)
        check("ping", True)

        await ws.close(4001, "done")
        check("close-4001", ws.close_code == 4001, str(ws.close_code))

    async with connect(url, compression=None, max_size=None) as ws:
        await ws.send(b"x" * (2 << 20))
        try:
            await asyncio.wait_for(ws.recv(), 10)
            check("too-big", False, "echoed")
        except websockets.ConnectionClosed as e:
            check("too-big", e.rcvd is not None and e.rcvd.code == 1009, str(e))

    print("\n".join(results))


asyncio.run(main(sys.argv[1]))
