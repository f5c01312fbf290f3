"""HttpArena's endpoints as a plain ASGI 3 app (no framework, standard
library only), served by m0serve. /static/* never reaches it: m0serve's
own static mount serves /data/static (launch.sh)."""
import json
import os
import zlib
from urllib.parse import parse_qsl

DATASET_PATH = os.environ.get("DATASET_PATH", "/data/dataset.json")
try:
    with open(DATASET_PATH, encoding="utf-8") as f:
        DATASET = json.load(f)
except OSError:
    DATASET = []

TEXT = (b"content-type", b"text/plain")
JSON = (b"content-type", b"application/json")
GZIP = (b"content-encoding", b"gzip")


def query_sum(scope):
    """The sum of the query's integer values (a=13&b=42: 55)."""
    total = 0
    for _, value in parse_qsl(scope["query_string"].decode("latin-1")):
        try:
            total += int(value)
        except ValueError:
            pass
    return total


async def read_body(receive):
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


async def answer(send, status, headers, body):
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def accepts_gzip(scope):
    for name, value in scope["headers"]:
        if name == b"accept-encoding":
            return b"gzip" in value
    return False


def json_items(count, multiplier):
    """The first count items of the dataset, each with its total: made
    and serialised for every request."""
    items = []
    for item in DATASET[:count]:
        item = dict(item)
        item["total"] = item["price"] * item["quantity"] * multiplier
        items.append(item)
    return json.dumps({"items": items, "count": len(items)}, separators=(",", ":")).encode()


async def serve_json(scope, send, tail):
    try:
        count = int(tail)
        multiplier = int(dict(parse_qsl(scope["query_string"].decode("latin-1"))).get("m", "1"))
    except ValueError:
        await answer(send, 400, [TEXT], b"count and m are integers")
        return
    body = json_items(max(count, 0), multiplier)
    if accepts_gzip(scope):
        await answer(send, 200, [JSON, GZIP], zlib.compress(body, 1, 31))
    else:
        await answer(send, 200, [JSON], body)


async def echo(receive, send):
    """The echo-ws profile: every message back as it came."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("text") is not None:
            await send({"type": "websocket.send", "text": message["text"]})
        else:
            await send({"type": "websocket.send", "bytes": message["bytes"]})


async def lifespan(receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def app(scope, receive, send):
    kind = scope["type"]
    if kind == "http":
        path, method = scope["path"], scope["method"]
        if path in ("/baseline11", "/baseline2"):
            total = query_sum(scope)
            if method == "POST":
                body = await read_body(receive)
                if body is None:
                    return
                try:
                    total += int(body)
                except ValueError:
                    await answer(send, 400, [TEXT], b"the body is not an integer")
                    return
            await answer(send, 200, [TEXT], str(total).encode())
        elif path == "/pipeline":
            await answer(send, 200, [TEXT], b"ok")
        elif path.startswith("/json/"):
            await serve_json(scope, send, path[len("/json/"):])
        elif path == "/upload" and method == "POST":
            size = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                size += len(message.get("body", b""))
                if not message.get("more_body", False):
                    break
            await answer(send, 200, [TEXT], str(size).encode())
        else:
            await answer(send, 404, [TEXT], b"not found")
    elif kind == "websocket":
        if scope["path"] == "/ws":
            await echo(receive, send)
        else:
            await send({"type": "websocket.close", "code": 1008})
    elif kind == "lifespan":
        await lifespan(receive, send)
