"""m0serve: a Python application server written in Go.

The package carries the m0serve binary, built against one CPython (the
one this wheel is tagged for), and starts it: the console script
`m0serve` and `python -m m0serve` both call main(), which execs the
binary with the arguments and the environment as given. One variable is
added: M0_VENV (the binary's --venv), naming the virtual environment
this package is installed in, so the app imports from that environment's
site-packages whether or not it is activated. An M0_VENV already set, or
a --venv flag, wins.
"""

import os
import sys

from m0serve._build import PYTHON_VERSION

__all__ = ["binary", "main"]


def binary():
    """The path of the m0serve binary in this package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "m0serve")


def main():
    running = "%d.%d" % sys.version_info[:2]
    if running != PYTHON_VERSION:
        # The binary would load libpython PYTHON_VERSION and this
        # interpreter's packages, built for another ABI: stop here.
        sys.stderr.write(
            "m0serve: this m0serve embeds CPython %s but runs under CPython %s (%s);"
            " install the m0serve wheel built for %s\n"
            % (PYTHON_VERSION, running, sys.executable, running)
        )
        sys.exit(2)
    env = os.environ
    if sys.prefix != sys.base_prefix and "M0_VENV" not in env:
        env = dict(env, M0_VENV=sys.prefix)
    path = binary()
    try:
        os.execve(path, [path] + sys.argv[1:], env)
    except OSError as err:
        sys.stderr.write("m0serve: cannot run %s: %s\n" % (path, err.strerror))
        sys.exit(1)
