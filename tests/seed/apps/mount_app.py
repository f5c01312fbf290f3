"""Two WSGI apps for --mount in tests/seed/row.py: each answers with its
name, SCRIPT_NAME and PATH_INFO."""


def _app(name):
    def application(environ, start_response):
        body = ("%s|%s|%s" % (name, environ.get("SCRIPT_NAME", ""), environ.get("PATH_INFO", ""))).encode()
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return [body]

    return application


site = _app("site")
api = _app("api")
v2 = _app("v2")
