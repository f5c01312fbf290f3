"""ASGI shapes for interface detection."""


async def app(scope, receive, send):
    pass


class App:
    async def __call__(self, scope, receive, send):
        pass


instance = App()


def wsgi(environ, start_response):
    start_response("200 OK", [])
    return []


def make_wsgi():
    return wsgi


def make_asgi():
    return App()
