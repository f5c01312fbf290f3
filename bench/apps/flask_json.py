"""The Flask benchmark app: one route returning a small JSON object, the
row of `make bench-python` where the framework's own cost is in every
request (routing, the request context, jsonify).

    bin/m0serve --threads 1 --app-dir bench/apps flask_json:app

GET / answers {"message":"Hello, World!"} (Flask's compact JSON outside
debug mode) with Content-Type application/json.
"""
from flask import Flask, jsonify

app = Flask(__name__)


@app.route("/")
def hello():
    return jsonify(message="Hello, World!")
