"""Answers with wsgi.file_wrapper over the file named by the query string.

Not wrapped in the validator: the validator wraps the response iterable,
which hides the file wrapper from the server, and the file path (the
bytes never passing through Python) is what this app is for."""
from urllib.parse import unquote


def app(environ, start_response):
    path = unquote(environ["QUERY_STRING"])
    f = open(path, "rb")
    headers = [("Content-Type", "application/octet-stream")]
    if environ["PATH_INFO"] == "/sized":
        import os
        headers.append(("Content-Length", str(os.fstat(f.fileno()).st_size)))
    start_response("200 OK", headers)
    return environ["wsgi.file_wrapper"](f, 32768)
