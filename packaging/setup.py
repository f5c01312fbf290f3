"""Tags the wheel for the one CPython its binary embeds.

The binary links libpython3.X, so the wheel is cpXY-cpXY-<platform>,
not py3-none-any: pip then installs it only into that CPython. The tag
comes from m0serve/_build.py, which build-wheel.sh writes beside the
binary.
"""

import pathlib
import re

from setuptools import Distribution, setup
from wheel.bdist_wheel import bdist_wheel


def built_for():
    text = pathlib.Path(__file__).with_name("m0serve").joinpath("_build.py").read_text()
    match = re.search(r'^PYTHON_VERSION = "(\d+)\.(\d+)"$', text, re.M)
    if not match:
        raise SystemExit("setup.py: m0serve/_build.py names no PYTHON_VERSION (run build-wheel.sh)")
    return "cp%s%s" % match.groups()


class BinaryDistribution(Distribution):
    """Has a platform binary: the wheel's files go to platlib, at its root."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        _, _, platform = super().get_tag()
        tag = built_for()
        return tag, tag, platform


setup(distclass=BinaryDistribution, cmdclass={"bdist_wheel": PlatformWheel})
