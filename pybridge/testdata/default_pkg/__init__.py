"""A package without application or app: a bare default_pkg serves
default_pkg.wsgi:application (the asgi submodule is absent)."""
