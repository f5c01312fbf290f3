"""m0serve: a Python application server written in Go.

The distribution is m0serve-go (pip install m0serve-go); it installs this
package and the command m0serve.

The server runs inside this interpreter: m0serve._m0serve is m0serve's Go
packages built as a CPython extension module, and the console script
`m0serve` and `python -m m0serve` both call main(), which hands the
main thread to the server (the GIL released) until it stops; run() is
the same from Python code, as uvicorn.run. The app
imports from this interpreter's environment (a venv's site-packages
included, activated or not); with --workers each worker is this
interpreter again, started as `python -m m0serve`.
"""

import glob
import os
import sys
import sysconfig

__all__ = ["main", "run"]

if sysconfig.get_config_var("Py_GIL_DISABLED"):
    # The bridge relies on the GIL; the wheel carries no cp313t build.
    raise ImportError("m0serve does not support the free-threaded CPython build (%s) yet" % sys.executable)


from m0serve._run import run  # noqa: E402 (after the free-threading check)


def main(argv=None):
    """Runs m0serve with argv (default: sys.argv[1:]) and exits with its
    status: 0 on a clean stop, 2 for a usage or configuration mistake."""
    try:
        from m0serve import _m0serve
    except ImportError as err:
        # The usual cause: this package was installed for another CPython
        # (its extension is _m0serve.cpython-3XY-...so) and is reached
        # through PYTHONPATH or a copied site-packages.
        here = os.path.dirname(os.path.abspath(__file__))
        mine = "_m0serve" + sysconfig.get_config_var("EXT_SUFFIX")
        found = sorted(os.path.basename(p) for p in glob.glob(os.path.join(here, "_m0serve*.so")))
        if mine in found:
            sys.stderr.write("m0serve: cannot load %s: %s\n" % (os.path.join(here, mine), err))
        else:
            sys.stderr.write(
                "m0serve: this installation has %s, not an extension for CPython %d.%d (%s):"
                " install m0serve-go with this interpreter (%s -m pip install m0serve-go)\n"
                % (" ".join(found) or "no extension module", sys.version_info[0], sys.version_info[1], sys.executable,
                   sys.executable)
            )
        sys.exit(2)

    args = sys.argv[1:] if argv is None else list(argv)
    # What Python buffered goes out before the server writes to the same
    # descriptors.
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(_m0serve.main(args))
