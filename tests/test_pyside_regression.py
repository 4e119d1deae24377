"""PySide6 6.12.0 on Python 3.11 aborts after a few thousand calls of a Qt method returning None.

pyproject.toml keeps that pair out; this loop catches a regression (a crash ends the child process).
"""

import subprocess
import sys

LOOP = r"""
from PySide6.QtCore import QObject
o = QObject()
for i in range(2_000_000):
    o.setObjectName("x")
import PySide6
print(PySide6.__version__)
"""


def test_two_million_void_qt_calls_do_not_crash():
    out = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True, timeout=600,
                         env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr[-2000:]}"


def test_the_broken_pair_is_not_installed():
    from importlib.metadata import version

    v = tuple(int(x) for x in version("PySide6-Essentials").split(".")[:2])
    assert not (sys.version_info[:2] == (3, 11) and v >= (6, 12)), "PySide6 >= 6.12 on Python 3.11"
