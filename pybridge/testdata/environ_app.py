"""Echoes the environ as JSON, under wsgiref's PEP 3333 validator."""
import json
import sys
import warnings
from wsgiref.validate import WSGIWarning, validator

# A validator warning is a spec violation: make it fail the request.
warnings.simplefilter("error", WSGIWarning)


def _app(environ, start_response):
    out = {}
    for key, value in environ.items():
        if isinstance(value, str):
            out[key] = value
    out["wsgi.version"] = list(environ["wsgi.version"])
    for key in ("wsgi.multithread", "wsgi.multiprocess", "wsgi.run_once",
                "wsgi.input_terminated"):
        out[key] = environ[key]
    errors = environ["wsgi.errors"]
    # The validator wraps wsgi.errors; look through its wrapper.
    out["wsgi.errors.is_stderr"] = getattr(errors, "errors", errors) is sys.stderr
    out["wsgi.file_wrapper"] = environ["wsgi.file_wrapper"].__name__
    body = json.dumps(out).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]


app = validator(_app)
# Unvalidated, for what the validator warns about (an unknown method).
raw = _app
