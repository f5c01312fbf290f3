"""Importable only through the site directory the tests add."""
import sys


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [repr(sys.path[:1]).encode()]
