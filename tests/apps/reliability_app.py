"""WSGI (wsgi) and ASGI (asgi) apps for the reliability tests: what a
client or a slow app can do to a worker. What a request saw after its
response goes to files under $E2E_DIR for the test to read."""

import os
import socket
import threading
import time

from asgi_lifespan import lifespan

OUT = os.environ.get("E2E_DIR", "")


def record(name, text):
    if OUT and name:
        with open(os.path.join(OUT, name), "a") as f:
            f.write(text)


def wsgi(environ, start_response):
    path = environ["PATH_INFO"]
    query = environ.get("QUERY_STRING", "")
    if environ["REQUEST_METHOD"] == "OPTIONS":
        body = "%s|%s" % (path, environ.get("RAW_URI", "-"))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [body.encode()]
    if path == "/host":
        body = "%s|%s" % (environ.get("HTTP_HOST", "-"), environ["PATH_INFO"])
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [body.encode()]
    if path == "/big":
        # Streams far more than socket buffers hold; a client that does
        # not read stalls the write. What ended it goes to $E2E_DIR/<query>.
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return _stream(query)
    if path == "/body":
        # The request body's length, read whole.
        n = len(environ["wsgi.input"].read())
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"%d" % n]
    if path == "/block":
        # Holds its handler thread until the test writes <query>.release.
        record(query + ".entered", "1")
        release = os.path.join(OUT, query + ".release")
        for _ in range(6000):
            if os.path.exists(release):
                break
            time.sleep(0.01)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"released"]
    if path == "/hog":
        # Opens sockets until the process is out of descriptors, and a
        # thread of the app holds them <query> ms before closing them: a
        # database pool's or a leak's doing, outside the server's sight.
        held = _hog()
        threading.Thread(target=_release, args=(held, int(query or "0") / 1000), daemon=True).start()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"%d" % len(held)]
    if path == "/sleep":
        time.sleep(int(query or "0") / 1000)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"slept"]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def _hog():
    held = []
    try:
        while len(held) < 100000:
            held.append(socket.socket())
    except OSError:
        pass
    return held


def _release(held, after):
    time.sleep(after)
    for s in held:
        s.close()


def _stream(name):
    block = b"x" * 65536
    try:
        for _ in range(16384):  # 1 GiB
            yield block
    except BaseException as e:
        record(name, type(e).__name__)
        raise
    record(name, "finished")


async def asgi(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    path = scope["path"]
    name = scope["query_string"].decode()
    start = {"type": "http.response.start", "status": 200,
             "headers": [(b"content-type", b"text/plain")]}
    if scope["method"] == "OPTIONS":
        await send(start)
        await send({"type": "http.response.body", "body": ("%s|%s" % (path, scope["raw_path"].decode())).encode()})
    elif path == "/host":
        hosts = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]
        await send(start)
        await send({"type": "http.response.body", "body": ("%s|%s" % (",".join(hosts), path)).encode()})
    elif path == "/big":
        await send(start)
        block = b"x" * 65536
        try:
            for _ in range(16384):
                await send({"type": "http.response.body", "body": block, "more_body": True})
        except BaseException as e:
            record(name, type(e).__name__)
            raise
        record(name, "finished")
        await send({"type": "http.response.body", "body": b""})
    else:
        # Answers without calling receive().
        await send(start)
        await send({"type": "http.response.body", "body": b"ok " + path.encode()})
