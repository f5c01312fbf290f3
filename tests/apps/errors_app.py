"""One PEP 3333 violation per PATH_INFO, and /ok.

Not wrapped in the validator: each path breaks the spec on purpose, and
the validator would raise its own AssertionError before the server saw
the violation it is meant to handle."""

_LOG = []


class Body:
    """An iterable with close() yielding items, raising at an exception."""

    def __init__(self, name, items):
        self.name = name
        self.items = items

    def __iter__(self):
        for item in self.items:
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self):
        _LOG.append(self.name)


def app(environ, start_response):
    path = environ["PATH_INFO"]
    text = [("Content-Type", "text/plain")]
    if path == "/ok":
        closed = ",".join(_LOG).encode()
        del _LOG[:]
        start_response("200 OK", text)
        return Body("ok", [b"fine; closed: ", closed])
    if path == "/raise-before":
        raise KeyError("m0test raised before start_response")
    if path == "/raise-after-start":
        start_response("200 OK", text)
        raise KeyError("m0test raised after start_response")
    if path == "/bad-status":
        start_response("OK", text)
        return [b"x"]
    if path == "/bad-header":
        start_response("200 OK", [("X-Bad", "a\r\nSet-Cookie: evil=1")])
        return [b"x"]
    if path == "/non-bytes":
        start_response("200 OK", text)
        return [b"a", "not bytes"]
    if path == "/non-bytes-stream":
        start_response("200 OK", text)
        return Body("non-bytes-stream", [b"first block", "not bytes"])
    if path == "/no-start":
        return Body("no-start", [b"body"])
    if path == "/raise-mid-stream":
        start_response("200 OK", text)
        return Body("raise-mid-stream", [b"one", b"two", RuntimeError("m0test mid-stream")])
    start_response("404 Not Found", text)
    return [b"no such test"]
