"""The --threads 0 test app: it names the OS thread each request runs on,
so a test can tell the loop thread (requests without a body) from the
handler thread (requests with one). Wrapped in wsgiref's validator."""
import threading

from validated import validator


def _app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/raise":
        raise RuntimeError("raised before start_response, on purpose")
    if path == "/big":
        # A body far larger than the socket buffers: its send stays in
        # flight while the client does not read.
        size = int(environ.get("QUERY_STRING") or "1") << 20
        start_response("200 OK", [("Content-Type", "application/octet-stream"),
                                  ("Content-Length", str(size))])
        return [b"x" * size]
    if path == "/stream":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return (piece for piece in (b"a", b"bc", b"def"))
    body = environ["wsgi.input"].read()
    text = "%d %d" % (threading.get_native_id(), len(body))
    start_response("200 OK", [("Content-Type", "text/plain"), ("X-Inline-Test", "yes")])
    return [text.encode()]


app = validator(_app)
