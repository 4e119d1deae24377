"""The engine stays pure: it imports with Qt, httpx and sqlite3 made impossible to import."""

import subprocess
import sys

from .conftest import ROOT

BLOCKER = r"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'PySide6', 'shiboken6', 'qasync', 'pyqtgraph', 'httpx', 'sqlite3', '_sqlite3'}:
            raise ImportError('blocked for this test: ' + name)
        return None
sys.meta_path.insert(0, Block())
import pkgutil, importlib, goalgui.engine
for info in pkgutil.walk_packages(goalgui.engine.__path__, 'goalgui.engine.'):
    importlib.import_module(info.name)  # every module, sub-packages included
from goalgui.engine import Model, ModelRequest, ModelReply, Usage, GoalView
from goalgui.engine import RateLimited, ProviderUnavailable, AuthenticationFailed, BadResponse, ProviderError
bad = sorted(m for m in sys.modules if m.split('.')[0] in {'PySide6', 'httpx', 'sqlite3', 'qasync', 'pyqtgraph'})
assert not bad, bad
print('ok')
"""


def test_engine_imports_without_qt_httpx_or_sqlite():
    out = subprocess.run([sys.executable, "-c", BLOCKER], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_no_engine_module_names_a_forbidden_import():
    # nor anything of goalgui's outer layers: the engine imports none of them (DESIGN.md, Layers)
    forbidden = ("PySide6", "httpx", "sqlite3", "qasync", "pyqtgraph", "subprocess", "goalgui")
    paths = sorted((ROOT / "goalgui" / "engine").rglob("*.py"))
    assert any(p.parent.name == "strategies" for p in paths)  # sub-packages are scanned too
    for path in paths:
        for line in path.read_text().splitlines():
            words = line.strip().split()
            if words[:1] in (["import"], ["from"]) and len(words) > 1:
                assert words[1].split(".")[0] not in forbidden, f"{path.name}: {line}"
                assert not words[1].startswith("..." if path.parent.name != "engine" else ".."), \
                    f"{path.name} reaches out of the engine: {line}"
