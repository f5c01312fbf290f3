"""The static-file row for servers that serve no files themselves
(uvicorn): Starlette's StaticFiles mounted at /static over the directory
the Makefile fills (bench/.venv/static, a 100 KB file).

    python -m uvicorn --app-dir bench/apps starlette_static:app
"""
import os

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

DIRECTORY = os.path.join(os.path.dirname(__file__), "..", ".venv", "static")

app = Starlette(routes=[Mount("/static", app=StaticFiles(directory=DIRECTORY))])
