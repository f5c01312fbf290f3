"""Logs each request on its logger "logconfig_app" at INFO, which only
a logging configuration (--log-config) lets through."""
import logging

log = logging.getLogger("logconfig_app")


def app(environ, start_response):
    log.info("handled %s", environ["PATH_INFO"])
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"logged\n"]
