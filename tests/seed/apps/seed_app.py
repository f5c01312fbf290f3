"""The WSGI app the seed-row client (tests/seed/row.py) runs on both
servers: plain WSGI, so the same file serves under either."""

import os
import threading
import urllib.request

calls = 0
calls_lock = threading.Lock()
barrier = threading.Barrier(2, timeout=5)


def application(environ, start_response):
    global calls
    with calls_lock:
        calls += 1
        seen = calls
    path = environ.get("PATH_INFO", "")
    status = "200 OK"
    if path == "/count":
        body = b"%d" % seen
    elif path == "/pid":
        body = b"%d" % os.getpid()
    elif path == "/echo":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = b"%d" % len(environ["wsgi.input"].read(length))
    elif path == "/barrier":
        # Both of two requests must be in the app at once to pass.
        try:
            barrier.wait()
            body = b"met"
        except threading.BrokenBarrierError:
            barrier.reset()
            status, body = "503 Service Unavailable", b"alone"
    elif path == "/outer":
        url = "http://127.0.0.1:%s/pid" % environ["SERVER_PORT"]
        try:
            with urllib.request.urlopen(url, timeout=3) as answer:
                body = b"%d %s" % (os.getpid(), answer.read())
        except OSError as err:
            body = b"%d failed: %s" % (os.getpid(), str(err).encode())
    else:
        body = b"app " + path.encode()
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
