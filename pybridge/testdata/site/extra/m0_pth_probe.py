"""Importable only through the .pth file in the site directory."""


def app(environ, start_response):
    start_response("200 OK", [])
    return [b"pth"]
