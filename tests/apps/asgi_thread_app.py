"""Where an ASGI app runs and what its event loop still does (tests/asgi_thread_test.go).

  GET /thread       the OS thread id serving the request
  GET /sleep        answers after asyncio.sleep (a timer)
  GET /executor     a result from run_in_executor (call_soon_threadsafe)
  GET /connect?N    the status line of GET /thread from this server on
                    port N, over asyncio.open_connection (a socket)
"""

import asyncio
import threading


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/thread":
        body = str(threading.get_native_id())
    elif path == "/sleep":
        await asyncio.sleep(0.05)
        body = "slept"
    elif path == "/executor":
        body = str(await asyncio.get_running_loop().run_in_executor(None, sum, [40, 2]))
    elif path == "/connect":
        port = int(scope["query_string"])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /thread HTTP/1.0\r\nHost: x\r\n\r\n")
        body = (await reader.readline()).decode().strip()
        writer.close()
        await writer.wait_closed()
    else:
        body = "not found"
    data = body.encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", b"%d" % len(data))]})
    await send({"type": "http.response.body", "body": data})
