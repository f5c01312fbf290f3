"""The bare WSGI benchmark app: what every WSGI arm of `make bench-python`
serves, so the figures measure the server, not the app.

    bin/m0serve --threads 1 --app-dir bench/apps wsgi_bare:app

Every path answers the same 13-byte body with two headers; the headers
list and body are built once, at import, so a request costs the server's
environ, the call and the response, and nothing of the app's own.
"""

BODY = b"Hello, World!"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]
CHUNKS = [BODY]


def app(environ, start_response):
    start_response("200 OK", HEADERS)
    return CHUNKS
