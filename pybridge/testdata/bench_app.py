"""The smallest useful WSGI app, for the bridge's benchmarks: a list body
of known length and two headers."""
import gc
import sys

BODY = b"Hello, World!"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]


def app(environ, start_response):
    start_response("200 OK", HEADERS)
    return [BODY]


def objects(environ, start_response):
    gc.collect()
    # gc objects count containers; allocated blocks also count the str and
    # bytes objects a leaked reference would keep.
    body = b"%d %d" % (len(gc.get_objects()), sys.getallocatedblocks())
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body]


_stderr = []


class _Sink:
    """A stderr that keeps nothing."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def quiet(environ, start_response):
    """Swaps sys.stderr for a sink (PATH_INFO /on) or back (/off), so a
    test serving thousands of failing requests does not flood the log."""
    if environ["PATH_INFO"] == "/on" and not _stderr:
        _stderr.append(sys.stderr)
        sys.stderr = _Sink()
    elif environ["PATH_INFO"] == "/off" and _stderr:
        sys.stderr = _stderr.pop()
    start_response("200 OK", [])
    return []


def version(environ, start_response):
    """The running interpreter's version, to check it against the headers
    the bridge was compiled with."""
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"%d.%d" % sys.version_info[:2]]
