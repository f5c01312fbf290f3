"""Fails to import: the loader must say why."""
import no_such_module_m0serve  # noqa: F401
