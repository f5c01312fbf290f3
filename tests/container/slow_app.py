"""For the container test: says on stderr that a request is inside, then
answers 2 seconds later, so the test can stop the container while the
request is in flight."""
import sys
import time


def app(environ, start_response):
    print("slow request inside", file=sys.stderr, flush=True)
    time.sleep(2)
    body = b"slow done"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
