"""Apps of tests/rootpath_test.go: Starlette and FastAPI report the URLs
they build (request.url, url_for, redirects) and the scope's paths, to
be compared between m0serve and uvicorn under --root-path."""
from fastapi import FastAPI, Request
from starlette.applications import Starlette
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route


def facts(request, name):
    return {"url": str(request.url), "url_for": str(request.url_for(name)),
            "path": request.scope["path"], "root_path": request.scope["root_path"],
            "raw_path": request.scope["raw_path"].decode("latin-1")}


def fastapi_app(**options):
    app = FastAPI(**options)

    @app.get("/whoami")
    async def whoami(request: Request):
        return facts(request, "whoami")

    @app.get("/go")
    async def go(request: Request):
        return RedirectResponse(request.url_for("whoami"))

    return app


# Behind a proxy that strips the prefix: the server is told it.
fastapi = fastapi_app()
# Behind a proxy that forwards the prefix: the app is told it.
fastapi_prefixed = fastapi_app(root_path="/api")


async def s_whoami(request):
    return JSONResponse(facts(request, "s_whoami"))


async def s_go(request):
    return RedirectResponse(request.url_for("s_whoami"))


starlette = Starlette(routes=[Route("/whoami", s_whoami, name="s_whoami"), Route("/go", s_go)])
