"""/big?mb=N answers N MiB in one body (a list of one bytes object), /ok
a few bytes: for the resident-memory tests."""


def app(environ, start_response):
    size = 4
    if environ["PATH_INFO"] == "/big":
        size = int(environ.get("QUERY_STRING", "mb=1").partition("=")[2]) << 20
    start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(size))])
    return [b"x" * size]
