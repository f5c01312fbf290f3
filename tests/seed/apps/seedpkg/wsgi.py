"""A package's wsgi module: a bare `seedpkg` serves it."""


def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"seedpkg.wsgi"]
