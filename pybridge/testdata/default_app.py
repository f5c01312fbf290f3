"""A module with both default attributes: application is the one served."""


def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"application"]


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"app"]
