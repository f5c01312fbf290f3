"""Answers GET /NAME with the process's environment variable NAME (for
--env-file), and its pid on the second line."""
import os


def app(environ, start_response):
    name = environ["PATH_INFO"].lstrip("/")
    body = ("%s\n%d" % (os.environ.get(name, "<unset>"), os.getpid())).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
