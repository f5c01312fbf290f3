"""A WSGI app whose view calls its own server: /outer requests /inner
of the same address and answers with both workers' pids."""

import os
import urllib.request


def app(environ, start_response):
    if environ["PATH_INFO"] == "/inner":
        body = b"%d" % os.getpid()
    else:
        url = "http://%s:%s/inner" % (environ["SERVER_NAME"], environ["SERVER_PORT"])
        try:
            with urllib.request.urlopen(url, timeout=3) as answer:
                body = b"%d %s" % (os.getpid(), answer.read())
        except OSError as err:
            body = b"%d failed: %s" % (os.getpid(), str(err).encode())
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
