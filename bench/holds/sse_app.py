"""The held-streams benchmark's app (bench/holds): /events/NAME holds a
stream on NAME, /pub/NAME publishes one frame to it."""

try:
    from m0serve import m0pub
except ImportError:  # a server without the bus
    m0pub = None


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path.startswith("/events/"):
        start_response("200 OK", [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                  ("M0-Hold", "stream"), ("M0-Channel", path[len("/events/"):])])
        return [b": connected\n\n"]
    reached = m0pub.publish(path[len("/pub/"):], "tick") if m0pub else 0
    body = b"%d\n" % reached
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
