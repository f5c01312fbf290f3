"""A plain WSGI app, no framework: what `make run` serves.

    bin/m0serve --app-dir examples hello_wsgi:app

Routes: / (text), /json (the request as JSON), /echo (POST: the body
back), /stream (a generator, sent chunked).
"""
import json


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/":
        body = b"Hello, World!"
        start_response("200 OK", [("Content-Type", "text/plain"),
                                  ("Content-Length", str(len(body)))])
        return [body]
    if path == "/json":
        body = json.dumps({
            "method": environ["REQUEST_METHOD"],
            "path": path,
            "query": environ["QUERY_STRING"],
            "user_agent": environ.get("HTTP_USER_AGENT", ""),
        }).encode()
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))])
        return [body]
    if path == "/echo":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length)
        start_response("200 OK", [("Content-Type", "application/octet-stream"),
                                  ("Content-Length", str(len(body)))])
        return [body]
    if path == "/stream":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return (b"line %d\n" % i for i in range(5))
    body = b"not found\n"
    start_response("404 Not Found", [("Content-Type", "text/plain"),
                                     ("Content-Length", str(len(body)))])
    return [body]
