"""A Flask app (Debian's python3-flask) served through the bridge."""
from flask import Flask, jsonify, request

app = Flask(__name__)


@app.route("/hello/<name>")
def hello(name):
    return jsonify(greeting="hello " + name, q=request.args.get("q"),
                   agent=request.headers.get("User-Agent"))


@app.post("/echo")
def echo():
    return request.get_data()[::-1]


def create_app():
    return app
