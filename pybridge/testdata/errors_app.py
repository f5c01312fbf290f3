"""One misbehaviour per PATH_INFO, and the record of close() calls."""
import sys

closed = []


class Body:
    """An iterable with close(), yielding the given items, raising at the
    position of an exception among them."""

    def __init__(self, name, items):
        self.name = name
        self.items = items

    def __iter__(self):
        for item in self.items:
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self):
        closed.append(self.name)


def app(environ, start_response):
    path = environ["PATH_INFO"]
    text = [("Content-Type", "text/plain")]
    if path == "/ok":
        start_response("200 OK", text)
        return Body("ok", [b"fine"])
    if path == "/raise-before":
        raise KeyError("before start_response")
    if path == "/raise-after-start":
        start_response("200 OK", text)
        raise KeyError("after start_response")
    if path == "/bad-status":
        start_response("OK", text)
        return [b"x"]
    if path == "/bad-status-type":
        start_response(200, text)
        return [b"x"]
    if path == "/bad-header-crlf":
        start_response("200 OK", [("X-Bad", "a\r\nSet-Cookie: evil=1")])
        return [b"x"]
    if path == "/bad-header-nul":
        start_response("200 OK", [("X-Bad", "a\x00b")])
        return [b"x"]
    if path == "/bad-header-name":
        start_response("200 OK", [("X Bad", "a")])
        return [b"x"]
    if path == "/hop-by-hop":
        start_response("200 OK", [("Connection", "Keep-Alive, close"), ("Keep-Alive", "timeout=5"),
                                  ("X-Ok", "y"), ("Upgrade", "h2c")])
        return [b"x"]
    if path == "/bad-header-type":
        start_response("200 OK", [("X-Bad", 1)])
        return [b"x"]
    if path == "/bad-header-latin1":
        start_response("200 OK", [("X-Bad", "\u20ac")])
        return [b"x"]
    if path == "/non-bytes":
        start_response("200 OK", text)
        return Body("non-bytes", [b"a", "not bytes"])
    if path == "/non-bytes-list":
        start_response("200 OK", text)
        return [b"a", "not bytes"]
    if path == "/no-start":
        return Body("no-start", [b"body"])
    if path == "/no-start-empty":
        return []
    if path == "/twice":
        start_response("200 OK", text)
        start_response("201 Created", text)
        return [b"x"]
    if path == "/exc-info-replace":
        start_response("200 OK", text)
        try:
            raise ValueError("handled")
        except ValueError:
            start_response("503 Service Unavailable", [("Content-Type", "text/html")],
                           sys.exc_info())
        return [b"replaced"]
    if path == "/exc-info-keyword":
        start_response("200 OK", text)
        try:
            raise ValueError("handled")
        except ValueError:
            start_response("502 Bad Gateway", text, exc_info=sys.exc_info())
        return [b"by keyword"]
    if path == "/bad-keyword":
        start_response("200 OK", text, info=None)
        return [b"x"]
    if path == "/exc-info-after-body":
        write = start_response("200 OK", text)
        write(b"first")
        try:
            raise ValueError("too late")
        except ValueError:
            start_response("500 Oops", text, sys.exc_info())
        return [b"never"]
    if path == "/raise-mid-stream":
        start_response("200 OK", text)
        return Body("raise-mid-stream", [b"one", b"two", RuntimeError("mid-stream")])
    if path == "/raise-in-close":
        start_response("200 OK", text)

        class Failing(Body):
            def close(self):
                closed.append("raise-in-close")
                raise RuntimeError("close failed")
        return Failing("raise-in-close", [b"kept"])
    if path == "/closed":
        body = ",".join(closed).encode()
        del closed[:]
        start_response("200 OK", text)
        return [body]
    start_response("404 Not Found", text)
    return [b"no such test"]
