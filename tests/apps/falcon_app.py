"""A Falcon 4 app twice over, for the end-to-end tests (tests/.venv):
wsgi_app (falcon.App) and asgi_app (falcon.asgi.App) with the same
resources: media (JSON) in and out, Falcon's own 400 for a body that is
not JSON, a streamed response, and, on ASGI, a WebSocket."""

import falcon
import falcon.asgi


class Things:
    def on_get(self, req, resp, name):
        resp.media = {"name": name, "q": req.get_param("q", default="none")}

    def on_post(self, req, resp, name):
        body = req.get_media()
        resp.status = falcon.HTTP_201
        resp.media = {"name": name, "count": len(body["items"])}


class Stream:
    def on_get(self, req, resp):
        resp.content_type = falcon.MEDIA_TEXT
        resp.stream = (f"line {i}\n".encode() for i in range(50))


class AsyncThings:
    async def on_get(self, req, resp, name):
        resp.media = {"name": name, "q": req.get_param("q", default="none")}

    async def on_post(self, req, resp, name):
        body = await req.get_media()
        resp.status = falcon.HTTP_201
        resp.media = {"name": name, "count": len(body["items"])}

    async def on_websocket(self, req, ws, name):
        await ws.accept()
        while True:
            try:
                message = await ws.receive_text()
            except falcon.WebSocketDisconnected:
                return
            if message == "bye":
                await ws.close(4005)
                return
            await ws.send_text(f"{name} echo {message}")


class AsyncStream:
    async def on_get(self, req, resp):
        async def lines():
            for i in range(50):
                yield f"line {i}\n".encode()
        resp.content_type = falcon.MEDIA_TEXT
        resp.stream = lines()


wsgi_app = falcon.App()
wsgi_app.add_route("/things/{name}", Things())
wsgi_app.add_route("/stream", Stream())

asgi_app = falcon.asgi.App()
asgi_app.add_route("/things/{name}", AsyncThings())
asgi_app.add_route("/stream", AsyncStream())
