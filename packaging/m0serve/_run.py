"""m0serve.run: serve an app from Python code, as uvicorn.run does."""

import sys
import types

# The module a run() app object is served from: the server imports its
# app by name, and this one is already in sys.modules.
_HOLDER = "m0serve_run_app"


def run(app, host=None, port=None, workers=None, **options):
    """Serves app until the server stops (SIGTERM, SIGINT: a graceful
    stop, as on the command line), in this interpreter.

    app is a WSGI or ASGI app object, or an import string "module:attr"
    as the command line takes. host, port, workers and every other keyword
    are the command line's flags with underscores for dashes
    (root_path="/api" is --root-path /api, access_log=False is
    --access-log=false, a list repeats its flag); None leaves a flag out.
    With workers > 1 (or reload) each worker imports the app itself, so
    app must be an import string. Returns None after a clean stop and
    raises SystemExit with the command line's status otherwise (2: a
    mistake in the options or an app that does not import). A process
    runs the server once."""
    options.update(host=host, port=port, workers=workers)
    if isinstance(app, str):
        target = app
    elif callable(app):
        if (workers or 0) > 1 or options.get("reload"):
            name = "workers=%s" % workers if (workers or 0) > 1 else "reload=True"
            raise ValueError(
                "m0serve.run: with %s each worker imports the app: pass it as an import string, "
                "e.g. m0serve.run(\"main:app\", ...), not the app object" % name)
        holder = types.ModuleType(_HOLDER, "The app object m0serve.run serves.")
        holder.app = app
        sys.modules[_HOLDER] = holder
        target = _HOLDER + ":app"
    else:
        raise TypeError("m0serve.run: app is a WSGI or ASGI app or a \"module:attr\" string, not %r" % (app,))
    from m0serve import main

    try:
        main(_arguments(options) + ["--", target])
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
    finally:
        if sys.modules.get(_HOLDER) is not None and getattr(sys.modules[_HOLDER], "app", None) is app:
            del sys.modules[_HOLDER]


def _arguments(options):
    """The command line's flags for run()'s keywords."""
    args = []
    for name in sorted(options):
        value = options[name]
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if v is True:
                args.append(flag)
            elif v is False:
                args.append(flag + "=false")
            else:
                args += [flag, str(v)]
    return args
