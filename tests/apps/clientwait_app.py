"""WSGI app for the client-wait tests: slow readers and slow bodies must
not hold the only handler thread, and --threads still bounds how many
calls run at once. Side effects go to files under $E2E_DIR."""

import os
import threading
import time
import zlib

OUT = os.environ.get("E2E_DIR", "")

_lock = threading.Lock()
_running = 0
_most = 0


def record(name, text):
    if OUT and name:
        with open(os.path.join(OUT, name), "w") as f:
            f.write(text)


def block(i):
    """Block i of a streamed response: 64 KiB naming its index, so a
    client can tell a lost, repeated or reordered block."""
    head = b"%08d" % i
    return head * 8192


def app(environ, start_response):
    path = environ["PATH_INFO"]
    query = environ.get("QUERY_STRING", "")
    if path == "/stream":
        # ?<blocks>&<name>: <blocks> blocks of 64 KiB; <name> is written
        # under $E2E_DIR once the first block is handed over.
        blocks, name = query.split("&")
        start_response("200 OK", [("Content-Type", "application/octet-stream"),
                                  ("Content-Length", str(int(blocks) * 65536))])
        return _stream(int(blocks), name)
    if path == "/body":
        data = environ["wsgi.input"].read()
        body = b"%d %08x" % (len(data), zlib.crc32(data))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [body]
    if path == "/count":
        # Counts the calls running at once (time.sleep lets another thread
        # in if one may run); /most says the most seen.
        global _running, _most
        with _lock:
            _running += 1
            _most = max(_most, _running)
        time.sleep(int(query or "0") / 1000)
        with _lock:
            _running -= 1
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"counted"]
    if path == "/most":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"%d" % _most]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]


def _stream(blocks, name):
    for i in range(blocks):
        yield block(i)
        if i == 0:
            record(name, "started")
