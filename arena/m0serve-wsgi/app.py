"""HttpArena's endpoints as a plain WSGI app (no framework, standard
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

OK, BAD, NOT_FOUND = "200 OK", "400 Bad Request", "404 Not Found"
TEXT = ("Content-Type", "text/plain")
JSON = ("Content-Type", "application/json")
GZIP = ("Content-Encoding", "gzip")
UPLOAD_CHUNK = 256 << 10


def query_sum(environ):
    """The sum of the query's integer values (a=13&b=42: 55)."""
    total = 0
    for _, value in parse_qsl(environ.get("QUERY_STRING", "")):
        try:
            total += int(value)
        except ValueError:
            pass
    return total


def json_items(count, multiplier):
    """The first count items of the dataset, each with its total: made
    and serialised for every request."""
    items = []
    for item in DATASET[:count]:
        item = dict(item)
        item["total"] = item["price"] * item["quantity"] * multiplier
        items.append(item)
    return json.dumps({"items": items, "count": len(items)}, separators=(",", ":")).encode()


def serve(environ):
    """The status, headers and body of one request."""
    path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
    if path in ("/baseline11", "/baseline2"):
        total = query_sum(environ)
        if method == "POST":
            try:
                total += int(environ["wsgi.input"].read())
            except ValueError:
                return BAD, [TEXT], b"the body is not an integer"
        return OK, [TEXT], str(total).encode()
    if path == "/pipeline":
        return OK, [TEXT], b"ok"
    if path.startswith("/json/"):
        try:
            count = int(path[len("/json/"):])
            multiplier = int(dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("m", "1"))
        except ValueError:
            return BAD, [TEXT], b"count and m are integers"
        body = json_items(max(count, 0), multiplier)
        if "gzip" in environ.get("HTTP_ACCEPT_ENCODING", ""):
            return OK, [JSON, GZIP], zlib.compress(body, 1, 31)
        return OK, [JSON], body
    if path == "/upload" and method == "POST":
        size, body = 0, environ["wsgi.input"]
        while chunk := body.read(UPLOAD_CHUNK):
            size += len(chunk)
        return OK, [TEXT], str(size).encode()
    return NOT_FOUND, [TEXT], b"not found"


def app(environ, start_response):
    status, headers, body = serve(environ)
    start_response(status, headers)
    return [body]
