"""The smallest useful WSGI app, for the bridge's benchmarks: a list body
of known length and two headers."""
import gc

BODY = b"Hello, World!"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]


def app(environ, start_response):
    start_response("200 OK", HEADERS)
    return [BODY]


def objects(environ, start_response):
    gc.collect()
    body = str(len(gc.get_objects())).encode()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body]
