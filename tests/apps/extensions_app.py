"""The app of tests/python_link_test.go: C extension modules of the
interpreter's own (lib-dynload), each used once, so that a binary that
does not export CPython's symbols to them fails at import."""

import _asyncio
import _decimal
import _json
import ctypes
import pyexpat


def app(environ, start_response):
    tags = []
    parser = pyexpat.ParserCreate()
    parser.StartElementHandler = lambda name, attrs: tags.append(name)
    parser.Parse("<a><b/></a>", True)
    answer = [
        str(_decimal.Decimal("1.1") + _decimal.Decimal("2.2")),
        _json.scanstring('"x"', 1)[0],
        str(ctypes.sizeof(ctypes.c_int32)),
        "".join(tags),
        _asyncio.Future.__name__,
    ]
    body = " ".join(answer).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
