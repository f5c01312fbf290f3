"""--log-config: the app's Python logging configured from a file before
the app imports, as uvicorn's --log-config does it: a dictConfig in JSON
or YAML (.json, .yaml, .yml), else a fileConfig (.ini, ...). m0serve's
own log is not Python's logging: the loggers uvicorn names configure
nothing of it (--log-level, --log-format and --access-log do)."""
import json
import logging.config

UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")


def configure(path):
    """Returns None, "warning: ..." or the error, in one line."""
    try:
        if path.endswith(".json"):
            with open(path) as f:
                config = json.load(f)
            logging.config.dictConfig(config)
        elif path.endswith((".yaml", ".yml")):
            try:
                import yaml
            except ImportError:
                return ("%s is YAML and PyYAML is not installed where the app imports from:"
                        " install it there (pip install pyyaml) or write the configuration as JSON" % path)
            with open(path) as f:
                config = yaml.safe_load(f)
            logging.config.dictConfig(config)
        else:
            config = None
            logging.config.fileConfig(path, disable_existing_loggers=False)
    except Exception as e:
        return ("%s: %s: %s" % (path, type(e).__name__, e)).replace("\n", " ")
    named = sorted(set((config or {}).get("loggers") or {}) & set(UVICORN_LOGGERS)) if isinstance(config, dict) else []
    if named:
        return ("warning: %s configures %s, uvicorn's own loggers: m0serve's log is not Python's"
                " (--log-level, --log-format, --access-log set it); the app's loggers are configured" % (path, ", ".join(named)))
    return None
