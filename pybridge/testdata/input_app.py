"""Reads wsgi.input in the way PATH_INFO names and echoes what it read,
one piece per line of the response as repr(), so the test sees the
boundaries."""


def app(environ, start_response):
    body = environ["wsgi.input"]
    how = environ["PATH_INFO"]
    pieces = []
    if how == "/read3":
        while True:
            piece = body.read(3)
            pieces.append(piece)
            if not piece:
                break
    elif how == "/readhuge":
        pieces.append(body.read(2**40))
        pieces.append(body.read(2**40))
    elif how == "/read":
        pieces.append(body.read())
        pieces.append(body.read())
    elif how == "/readline":
        while True:
            line = body.readline()
            pieces.append(line)
            if not line:
                break
    elif how == "/readline4":
        while True:
            line = body.readline(4)
            pieces.append(line)
            if not line:
                break
    elif how == "/readlines":
        pieces.extend(body.readlines())
    elif how == "/iter":
        pieces.extend(iter(body))
    elif how == "/mixed":
        pieces.append(body.readline())
        pieces.append(body.read(2))
        pieces.append(body.read())
    elif how == "/catch":
        try:
            body.read()
        except OSError as e:
            pieces.append(type(e).__name__.encode())
    elif how == "/keep":
        global kept
        kept = body
        pieces.append(body.read())
    elif how == "/stale":
        try:
            kept.read()
            pieces.append(b"read a stale input")
        except ValueError as e:
            pieces.append(str(e).encode())
    elif how in ("/trailers", "/trailers-read3"):
        # m0serve.trailers before the body's end, and after it.
        pieces.append(repr(environ.get("m0serve.trailers", "absent")).encode())
        size = 3 if how == "/trailers-read3" else -1
        while body.read(size):
            pass
        pieces.append(repr(environ.get("m0serve.trailers", "absent")).encode())
    out = b"".join(repr(p).encode() + b"\n" for p in pieces)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [out]
