"""Response shapes: the list fast path, generators, write(), file_wrapper."""
import io


def app(environ, start_response):
    path = environ["PATH_INFO"]
    text = [("Content-Type", "text/plain"), ("X-Path", path)]
    if path == "/list":
        start_response("200 OK", text)
        return [b"hello ", b"", b"world"]
    if path == "/tuple":
        start_response("201 Created", text)
        return (b"a", b"b")
    if path == "/empty":
        start_response("204 No Content", [])
        return []
    if path == "/generator":
        start_response("200 OK", text)
        return (b"chunk%d;" % i for i in range(3))
    if path == "/generator-empty":
        def gen():
            start_response("200 OK", text)
            yield b""
        return gen()
    if path == "/write":
        write = start_response("200 OK", text)
        write(b"written ")
        return [b"then returned"]
    if path == "/file":
        start_response("200 OK", text)
        return environ["wsgi.file_wrapper"](io.BytesIO(b"0123456789" * 1000), 4096)
    if path == "/latin1":
        start_response("200 \xe9t\xe9", [("X-Latin", "caf\xe9")])
        return [b"x"]
    if path == "/many-headers":
        start_response("200 OK", [("X-H%d" % i, "v%d" % i) for i in range(40)])
        return [b"x"]
    start_response("404 Not Found", text)
    return [b""]


def files(environ, start_response):
    """wsgi.file_wrapper over a real file, opened at an offset."""
    import os
    path = os.path.join(os.path.dirname(__file__), "file_body.txt")
    f = open(path, "rb")
    f.read(int(environ.get("QUERY_STRING") or 0))
    start_response("200 OK", [("Content-Type", "text/plain")])
    return environ["wsgi.file_wrapper"](f)


def big(environ, start_response):
    """A list body of 3 x 40 000 bytes: over the default buffer limit."""
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "120000")])
    return [b"a" * 40000, b"b" * 40000, b"", b"c" * 40000]


def huge(environ, start_response):
    """A 2 MB list body, buffered whole without a Writer."""
    start_response("200 OK", [("Content-Type", "application/octet-stream")])
    return [b"x" * 2000000]


def stream(environ, start_response):
    """A 3 MB generator body in numbered 64 KiB blocks; records close()."""
    start_response("200 OK", [("Content-Type", "application/octet-stream")])

    def blocks():
        try:
            for i in range(48):
                yield (b"%08d" % i) * 8192
        finally:
            closed.append(environ["PATH_INFO"])
    return blocks()


closed = []


def slow(environ, start_response):
    """Three blocks 20 ms apart: a stream whose blocks must not wait."""
    import time
    start_response("200 OK", [("Content-Type", "text/plain")])

    def blocks():
        yield b"a"
        time.sleep(0.02)
        yield b"b"
        time.sleep(0.02)
        yield b"c"
    return blocks()
