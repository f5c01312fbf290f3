"""The container example's app: Flask from the image's venv (/venv).

Routes: / (a greeting), /env (where Flask and the interpreter come from:
the venv that the builder stage made from requirements.txt).
"""
import sys
from importlib import metadata

import flask
from flask import Flask, jsonify

app = Flask(__name__)


@app.get("/")
def index():
    return "Hello from Flask in a container!\n", 200, {"Content-Type": "text/plain; charset=utf-8"}


@app.get("/env")
def env():
    return jsonify(prefix=sys.prefix, flask=metadata.version("flask"), flask_file=flask.__file__)
