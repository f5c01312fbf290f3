"""Builds m0serve's extension module from the Go sources under go/.

The extension, m0serve/_m0serve<EXT_SUFFIX>, is cmd/m0serve-ext built
with `go build -buildmode=c-shared`: it links no libpython (the Python C
API resolves from the interpreter that imports it) and needs only libc.
The wheel is tagged for the one CPython minor version whose headers it
was built with (cpXY-cpXY), as Granian's are.

The target is this interpreter, or M0_TARGET_PYTHON (make wheel builds
every interpreter's wheel with one setuptools); M0_WHEEL_PLATFORM sets
the platform tag (make wheel: manylinux_2_17_x86_64, which it checks).
Building needs Go (go.mod's version, or a Go that fetches it) and a C
compiler (cgo's: `go env CC`, which CC sets; make wheel's is Zig's,
targeting glibc 2.17); without either it stops with one line naming
what is missing.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
GO_TREE = HERE / "go"
PROBE = """import json, sys, sysconfig
print(json.dumps({
    "implementation": sys.implementation.name,
    "version": "%d.%d" % sys.version_info[:2],
    "include": sysconfig.get_paths()["include"],
    "suffix": sysconfig.get_config_var("EXT_SUFFIX"),
    "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    "multiarch": sysconfig.get_config_var("MULTIARCH") or "",
}))"""


def fail(message):
    raise SystemExit("m0serve: " + message)


_target = None


def target():
    """What the wheel is built for: the target interpreter's version,
    headers and extension suffix."""
    global _target
    if _target is None:
        python = os.environ.get("M0_TARGET_PYTHON") or sys.executable
        try:
            out = subprocess.run([python, "-c", PROBE], check=True, capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as err:
            fail("cannot ask %s for its build settings: %s" % (python, err))
        _target = json.loads(out)
        _target["python"] = python
        major, minor = (int(x) for x in _target["version"].split("."))
        if _target["implementation"] != "cpython" or (major, minor) < (3, 10):
            fail("needs CPython 3.10 or newer; %s is %s %s" % (python, _target["implementation"], _target["version"]))
        if _target["free_threaded"]:
            fail("the free-threaded CPython build (%s) is not supported yet" % python)
    return _target


def multiarch_include(t):
    """Debian's Python.h reaches its pyconfig.h as
    <MULTIARCH/python3.X/pyconfig.h>, beside the other headers under
    /usr/include, which a compiler with a sysroot of its own (Zig's) does
    not search; and -I/usr/include would put this machine's libc headers
    before the ones it targets. So a folder of our own holds that one
    path, and is searched instead. None where pyconfig.h is in include."""
    include, multiarch = t["include"], t["multiarch"]
    real = os.path.join(os.path.dirname(include), multiarch, os.path.basename(include))
    if not multiarch or not os.path.isfile(os.path.join(real, "pyconfig.h")):
        return None
    folder = HERE / "build" / "multiarch-include"
    link = folder / multiarch / os.path.basename(include)
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(real)
    return str(folder)


def go_build(out):
    """Builds the extension into out with go build -buildmode=c-shared."""
    t = target()
    include = t["include"]
    if not os.path.isfile(os.path.join(include, "Python.h")):
        fail("building from source needs CPython %s's headers: no Python.h in %s (Debian: apt-get install python%s-dev)"
             % (t["version"], include, t["version"]))
    go = shutil.which("go")
    if go is None:
        fail("building from source needs Go 1.26 or newer (https://go.dev/dl/) and a C compiler: no `go` on PATH")
    cc = subprocess.run([go, "env", "CC"], capture_output=True, text=True).stdout.strip() or "gcc"
    if shutil.which(cc.split()[0]) is None:
        fail("building from source needs a C compiler: no `%s` on PATH (Debian: apt-get install gcc)" % cc.split()[0])
    if not (GO_TREE / "go.mod").is_file():
        fail("no Go sources in %s: build from the sdist (make wheel makes it)" % GO_TREE)
    multiarch = multiarch_include(t)
    version = (HERE / "VERSION").read_text().strip()
    commit_file = HERE / "COMMIT"
    commit = commit_file.read_text().strip() if commit_file.is_file() else "unknown"
    env = dict(
        os.environ,
        CGO_ENABLED="1",
        GOFLAGS="-mod=vendor",
        # pkg-config.sh: no libpython linked, the headers from include.
        PKG_CONFIG=str(GO_TREE / "pybridge" / "pkg-config.sh"),
        M0_PYTHON_LINK="none",
        M0_PYTHON_INCLUDE=include,
        # The include dir in CGO_CFLAGS too: the build cache keys on it.
        # Python.h defines _POSIX_C_SOURCE after cgo's own headers did;
        # gcc warns, Zig's clang (make wheel's CC) makes it an error.
        CGO_CFLAGS="-O2 -I" + include + ("" if multiarch is None else " -I" + multiarch)
        + (" -Wno-macro-redefined" if "zig" in os.path.basename(cc.split()[0]) else ""),
        # cgo links a test program with the library's objects to learn
        # their symbols; the Python C API stays undefined there too (-z
        # undefs: GNU ld's and Zig's lld's spelling alike).
        CGO_LDFLAGS="-O2 -Wl,-z,undefs",
    )
    ldflags = "-checklinkname=0 -s -w -X github.com/m0serve/m0serve/cli.version=%s -X github.com/m0serve/m0serve/cli.commit=%s" % (
        version, commit)
    with tempfile.TemporaryDirectory() as tmp:
        built = os.path.join(tmp, "_m0serve.so")
        cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=" + ldflags, "-o", built, "./cmd/m0serve-ext"]
        print("m0serve: building the extension for CPython %s: %s" % (t["version"], " ".join(cmd)), file=sys.stderr)
        if subprocess.run(cmd, cwd=GO_TREE, env=env).returncode != 0:
            fail("go build of the extension failed (the output above says why)")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copyfile(built, out)


class BuildPy(build_py):
    """Puts the extension beside the package's Python files."""

    def run(self):
        super().run()
        go_build(os.path.join(self.build_lib, "m0serve", "_m0serve" + target()["suffix"]))


class BinaryDistribution(Distribution):
    """Has a platform binary: the wheel's files go to platlib, at its root."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        _, _, platform = super().get_tag()
        tag = "cp" + target()["version"].replace(".", "")
        return tag, tag, os.environ.get("M0_WHEEL_PLATFORM") or platform


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildPy, "bdist_wheel": PlatformWheel})
