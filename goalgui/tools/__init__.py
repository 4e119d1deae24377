"""Tool implementations (files in the workspace, the sandboxed shell, HTTP, arithmetic, the run's
memory) behind the engine's Tool protocol, and the toolbox a run gets by default."""

from __future__ import annotations

from pathlib import Path

from ..engine.tools import Toolbox
from .calc import Calculate
from .files import FILE_TOOLS
from .recall import MemoryQuery
from .shell import RunShell
from .web import HttpGet

ALL_TOOLS = (*FILE_TOOLS, RunShell, HttpGet, Calculate, MemoryQuery)


def default_toolbox(workspace: str | Path) -> Toolbox:
    """Every tool, acting in `workspace` (created 0700 if missing)."""
    folder = Path(workspace)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return Toolbox([cls() for cls in ALL_TOOLS], folder.resolve())


__all__ = ["ALL_TOOLS", "default_toolbox"]
