"""Shapes for factory detection. The module has neither an application
nor an app attribute on purpose."""


def wsgi(environ, start_response):
    start_response("200 OK", [])
    return []


def create_app():
    return wsgi


def create_with_options(config=None, *, debug=False):
    return wsgi


def needs_config(config):
    return wsgi


def variadic(*args, **kwargs):
    return wsgi(*args, **kwargs)


async def asgi(scope, receive, send):
    pass


class ASGI2:
    def __init__(self, scope):
        self.scope = scope

    async def __call__(self, receive, send):
        pass


class Maker:
    def build(self):
        return wsgi

    def __call__(self, environ, start_response):
        return wsgi(environ, start_response)


maker = Maker()
