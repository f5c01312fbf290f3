"""A WSGI app that gzips a 40 KB body per request (HttpArena's
json-comp): zlib's deflate state is a few hundred KB of C buffers,
allocated and freed on every request."""
import zlib

BODY = b"".join(b'{"id":%d,"name":"item %d","tags":["a","b"]},' % (i, i) for i in range(1000))


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
    return [zlib.compress(BODY, 1, 31)]
