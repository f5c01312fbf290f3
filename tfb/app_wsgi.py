"""The TechEmpower plaintext and json tests as a WSGI app (no framework):
m0serve app_wsgi:app. The json test's object is made and serialised for
every request, as the rules require."""
import json

PLAINTEXT = b"Hello, World!"
NOT_FOUND = b"Not Found"


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/plaintext":
        body, content_type = PLAINTEXT, "text/plain"
    elif path == "/json":
        body = json.dumps({"message": "Hello, World!"}, separators=(",", ":")).encode()
        content_type = "application/json"
    else:
        start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
        return [NOT_FOUND]
    start_response("200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]
