"""Deterministic models behind the real `Model` protocol, for engine tests."""

from __future__ import annotations

import asyncio
import json
from typing import Callable

from goalgui.engine import ModelReply, ModelRequest, Usage


class FunctionModel:
    """A model whose answers come from a function of the request (str, ModelReply, or raise)."""

    def __init__(self, fn: Callable[[ModelRequest], object], *, delay: float = 0.0, name: str = "function"):
        self.fn = fn
        self.delay = delay
        self.name = name
        self.calls: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.calls.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        out = self.fn(request)
        if isinstance(out, ModelReply):
            return out
        return ModelReply(out if isinstance(out, str) else json.dumps(out), usage=Usage(10, 5))

    def purposes(self) -> list[str]:
        return [c.purpose for c in self.calls]


def well_behaved(request: ModelRequest, *, width: int = 3, leaf_depth: int = 1):
    """Splits the root into `width` parts, does each leaf, verifies YES."""
    p = request.purpose
    if p == "actionable":
        return "YES it is small" if request.goal.depth >= leaf_depth else "NO too big"
    if p == "decompose":
        return [f"Find part {i} of {request.goal.text}" for i in range(width)]
    if p == "execute":
        return f"result for {request.goal.text}"
    if p == "verify":
        return "YES"
    return "summary"


def split_script(path, parts, *, latency: float = 0.0, execute: str = "a result", summarize: str = "done") -> str:
    """Write a script for the `scripted:PATH` provider (the `goalgui` command's own scripted model):
    the root is judged too big and split into `parts`; every other goal is actionable, executed
    with `execute` and verified YES; each call takes `latency` seconds. Returns the model spec."""
    script = {"rules": [{"purpose": "actionable", "depth": 0, "reply": "NO"},
                        {"purpose": "decompose", "reply": list(parts)}],
              "defaults": {"actionable": "YES", "execute": execute, "verify": "YES", "summarize": summarize}}
    if latency:
        script["latency"] = latency
    path.write_text(json.dumps(script))
    return f"scripted:{path}"
