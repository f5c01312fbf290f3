"""An app whose import takes SLOW_IMPORT_SECONDS (as a large project's
does): it creates the file SLOW_IMPORT_STARTED names as the import
begins and the one SLOW_IMPORT_DONE names as it ends."""
import os
import time

open(os.environ["SLOW_IMPORT_STARTED"], "w").close()
time.sleep(float(os.environ["SLOW_IMPORT_SECONDS"]))
open(os.environ["SLOW_IMPORT_DONE"], "w").close()


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"imported\n"]
