"""Fails to import: the loader must say why."""
import importlib

importlib.import_module("no_such_module_m0serve")
