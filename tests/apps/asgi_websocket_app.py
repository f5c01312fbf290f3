"""ASGI WebSocket test app for tests/asgi_websocket_test.go: a raw ASGI
app whose path picks the behaviour, a Starlette WebSocket route under
/starlette and a FastAPI one under /fastapi. Side effects (the disconnect seen, an error
raised by send) go to $E2E_DIR."""

import json
import os

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute

from asgi_lifespan import lifespan


def record(name, value):
    with open(os.path.join(os.environ["E2E_DIR"], name), "w") as f:
        f.write(value)


async def starlette_echo(websocket):
    await websocket.accept(subprotocol=(websocket.scope["subprotocols"] or [None])[0])
    async for text in websocket.iter_text():
        await websocket.send_text("starlette " + text)


starlette_app = Starlette(routes=[WebSocketRoute("/starlette/echo", starlette_echo)])

fastapi_app = FastAPI()


@fastapi_app.websocket("/fastapi/echo")
async def fastapi_echo(websocket: WebSocket):
    await websocket.accept()
    try:
        while True:
            data = await websocket.receive_bytes()
            await websocket.send_bytes(data[::-1])
    except WebSocketDisconnect as e:
        record("fastapi-disconnect", str(e.code))


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"plain"})
        return
    path = scope["path"]
    if path.startswith("/starlette/"):
        await starlette_app(scope, receive, send)
        return
    if path.startswith("/fastapi/"):
        await fastapi_app(scope, receive, send)
        return
    first = await receive()
    assert first == {"type": "websocket.connect"}, first
    if path == "/echo":
        await send({"type": "websocket.accept", "headers": [(b"x-app", b"echo")]})
        queued = 0
        while True:
            m = await receive()
            if m["type"] == "websocket.disconnect":
                again = await receive()
                record("disconnect", json.dumps([m["code"], m["reason"], queued, again == m]))
                return
            if m.get("text") == "queued":
                queued += 1
            if m.get("text") == "scope":
                s = {k: scope[k] for k in ("type", "scheme", "path", "raw_path", "query_string",
                                           "http_version", "subprotocols", "extensions")}
                s["asgi"] = scope["asgi"]
                s["raw_path"] = s["raw_path"].decode()
                s["query_string"] = s["query_string"].decode()
                await send({"type": "websocket.send", "text": json.dumps(s)})
            elif m.get("text") == "queued":
                pass
            elif m.get("text") == "close":
                await send({"type": "websocket.close", "code": 4002, "reason": "asked"})
                try:
                    await send({"type": "websocket.send", "text": "after close"})
                except OSError as e:
                    record("send-after-close", type(e).__name__)
                return
            elif m.get("text") is not None:
                await send({"type": "websocket.send", "text": "echo " + m["text"]})
            else:
                await send({"type": "websocket.send", "bytes": m["bytes"]})
    elif path == "/mirror":
        # What tests/tools/ws_client.py expects: every message echoed as it came.
        await send({"type": "websocket.accept"})
        while True:
            m = await receive()
            if m["type"] == "websocket.disconnect":
                return
            m["type"] = "websocket.send"
            await send(m)
    elif path == "/flood":
        # 400 messages of 64 KiB to a client that does not read at first:
        # send must wait rather than queue 25 MiB.
        await send({"type": "websocket.accept"})
        chunk = b"x" * 65536
        for i in range(400):
            await send({"type": "websocket.send", "bytes": chunk})
            record("flood", str(i + 1))
        record("flood-done", "yes")
        await receive()
    elif path == "/deny":
        await send({"type": "websocket.close"})
    elif path == "/denial":
        await send({"type": "websocket.http.response.start", "status": 401,
                    "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "websocket.http.response.body", "body": b"no ", "more_body": True})
        await send({"type": "websocket.http.response.body", "body": b"entry"})
    elif path == "/denial-big":
        # A denial body past the response outbox, in one message or in
        # pieces (?pieces=N), as tests/asgi_websocket_test.go's
        # TestASGIWebSocketDenialBody sends it.
        params = dict(p.split("=") for p in scope["query_string"].decode().split("&"))
        size, pieces = int(params["size"]), int(params.get("pieces", "1"))
        await send({"type": "websocket.http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/octet-stream")]})
        step = -(-size // pieces)
        for start in range(0, size, step):
            end = min(start + step, size)
            await send({"type": "websocket.http.response.body",
                        "body": bytes([start % 251]) * (end - start), "more_body": end < size})
        record("denial-big", str(size))
    elif path == "/send-first":
        try:
            await send({"type": "websocket.send", "text": "too soon"})
        except RuntimeError:
            record("send-first", "RuntimeError")
        await send({"type": "websocket.close"})
    elif path == "/bad-protocol":
        try:
            await send({"type": "websocket.accept", "subprotocol": "never-offered"})
        except RuntimeError:
            record("bad-protocol", "RuntimeError")
        await send({"type": "websocket.close"})
    elif path == "/raise-before":
        raise ValueError("raised before accept")
    elif path == "/raise-after":
        await send({"type": "websocket.accept"})
        await receive()
        raise ValueError("raised after accept")
    elif path == "/return":
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": "bye"})
