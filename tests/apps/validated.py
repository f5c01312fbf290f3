"""Shared by the test apps: wsgiref's PEP 3333 validator, with its
warnings made errors, so a spec violation fails the request (500, and
an AssertionError or WSGIWarning traceback in the server's log, which
the tests look for)."""
import warnings
from wsgiref import validate
from wsgiref.validate import WSGIWarning, validator

warnings.simplefilter("error", WSGIWarning)

# One relaxation: wsgi.input.read() with no size. The validator predates
# the wsgi.input_terminated extension, under which a server (gunicorn,
# m0serve) promises that read() stops at the end of the body, and
# Werkzeug then reads that way. The result is still checked to be bytes.
_checked_read = validate.InputWrapper.read


def _read(self, *args):
    if not args:
        return _checked_read(self, -1)
    return _checked_read(self, *args)


validate.InputWrapper.read = _read

__all__ = ["validator"]
