"""Answers with its environ as JSON (the str values, and the wsgi.* flags),
for the differential test against gunicorn."""
import json
import sys

from validated import validator


def _app(environ, start_response):
    out = {k: v for k, v in environ.items() if isinstance(v, str)}
    out["wsgi.version"] = list(environ["wsgi.version"])
    for key in ("wsgi.multithread", "wsgi.multiprocess", "wsgi.run_once"):
        out[key] = environ[key]
    out["wsgi.input_terminated"] = environ.get("wsgi.input_terminated")
    errors = environ["wsgi.errors"]
    out["wsgi.errors"] = "stderr" if getattr(errors, "errors", errors) is sys.stderr else type(errors).__name__
    out["wsgi.file_wrapper"] = callable(environ.get("wsgi.file_wrapper"))
    # The body, read the way the validator allows: with a size.
    body = b""
    stream = environ["wsgi.input"]
    while True:
        block = stream.read(65536)
        if not block:
            break
        body += block
    out["body"] = body.decode("latin-1")
    data = json.dumps(out, sort_keys=True).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(data)))])
    return [data]


app = validator(_app)
