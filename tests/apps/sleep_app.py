"""Sleeps 100 ms per request and records how many requests were inside the
app at once: /max answers the highest count seen, /threads how many
distinct threads served."""
import threading
import time

from validated import validator

_lock = threading.Lock()
_inside = 0
_max_inside = 0
_threads = set()


def _app(environ, start_response):
    global _inside, _max_inside
    path = environ["PATH_INFO"]
    if path == "/max":
        with _lock:
            body = b"%d %d" % (_max_inside, len(_threads))
        start_response("200 OK", [("Content-Type", "text/plain"),
                                  ("Content-Length", str(len(body)))])
        return [body]
    with _lock:
        _inside += 1
        _max_inside = max(_max_inside, _inside)
        _threads.add(threading.get_ident())
    try:
        time.sleep(0.1)
    finally:
        with _lock:
            _inside -= 1
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", "5")])
    return [b"slept"]


app = validator(_app)


def _finalized():
    # Runs in Py_FinalizeEx: the server finalised Python on its way out.
    import sys
    sys.stderr.write("m0test: python finalized\n")
    sys.stderr.flush()


import atexit  # noqa: E402

atexit.register(_finalized)
