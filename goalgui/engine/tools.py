"""The Tool protocol, the toolbox a run offers its model, and argument checking.

A tool has a name, a JSON schema for its arguments, a side-effect class (`Action.READ`, `WRITE`,
`SHELL`, `NETWORK`) and a result cap. Implementations live outside the engine (`goalgui.tools`):
the engine only knows this protocol, so it stays free of files, processes and HTTP.

Whatever goes wrong with a call (an unknown name, arguments that fail the schema, a refusal, the
tool's own failure) is a result the model can read, never an exception out of a step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol

from .permissions import Action

EFFECTS = (Action.READ, Action.WRITE, Action.SHELL, Action.NETWORK)
DEFAULT_RESULT_CAP = 8_000  # characters of a result the model sees
MAX_ARGUMENT_CHARS = 200_000  # a write of more than this is refused before it is looked at


class ToolError(Exception):
    """A failure the model should read (a missing file, a path outside the workspace)."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict  # a JSON schema of type object
    effect: Action
    result_cap: int = DEFAULT_RESULT_CAP

    def offered(self) -> dict:
        """The form a model request carries (`ModelRequest.tools`)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass
class ToolEnv:
    """What a tool may act on: the run's workspace, its memory and record (read only), and
    whether its network is allowed for this call."""

    workspace: Path
    memory: Any = None
    record: Any = None
    network: bool = False


class Tool(Protocol):
    spec: ToolSpec

    def effect(self, arguments: dict) -> Action:
        """The side-effect class of this call (a shell command asking for the network is NETWORK)."""

    def preview(self, arguments: dict) -> str:
        """The call in a form a person reads before allowing it (the command, the path and diff, the URL)."""

    async def __call__(self, arguments: dict, env: ToolEnv) -> str: ...


class BaseTool:
    """A tool whose effect is its spec's and whose preview is its arguments, one per line."""

    spec: ToolSpec

    def effect(self, arguments: dict) -> Action:
        return self.spec.effect

    def preview(self, arguments: dict) -> str:
        return "\n".join(f"{k}: {v}" for k, v in arguments.items())


class Toolbox:
    """The tools a run offers, by name, and the workspace they act in."""

    def __init__(self, tools: Iterable[Tool], workspace: str | Path):
        self.workspace = Path(workspace)
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.spec.effect not in EFFECTS:
                raise ValueError(f"tool {tool.spec.name}: unknown side-effect class {tool.spec.effect}")
            self._tools[tool.spec.name] = tool

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def offered(self, names: Iterable[str] | None = None) -> list[dict]:
        """The specs for a model request: every tool, or those named (in that order)."""
        chosen = self._tools.values() if names is None else [self._tools[n] for n in names if n in self._tools]
        return [t.spec.offered() for t in chosen]


def cap(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[cut: {len(text) - limit:,} more characters]"


def check_arguments(schema: dict, arguments: Any) -> dict:
    """The arguments if they fit the tool's schema (the subset tools use: object, required,
    properties with string/integer/number/boolean/array types, enum, bounds, no extra keys);
    else ToolError saying what is wrong, in a line the model can act on."""
    if not isinstance(arguments, dict):
        raise ToolError(f"arguments must be a JSON object, not {type(arguments).__name__}")
    properties: dict = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in arguments:
            raise ToolError(f"missing argument {name!r}")
    for name, value in arguments.items():
        if name not in properties:
            if schema.get("additionalProperties", False) is False:
                known = ", ".join(properties) or "none"
                raise ToolError(f"unknown argument {name!r} (arguments: {known})")
            continue
        _check_value(name, properties[name], value)
    return arguments


_TYPES = {"string": str, "boolean": bool, "array": list, "object": dict}


def _check_value(name: str, schema: dict, value: Any) -> None:
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
            raise ToolError(f"argument {name!r} must be a whole number")
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ToolError(f"argument {name!r} must be a number")
    elif kind in _TYPES and not isinstance(value, _TYPES[kind]):
        raise ToolError(f"argument {name!r} must be a {kind}")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"argument {name!r} must be one of {', '.join(map(str, schema['enum']))}")
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            raise ToolError(f"argument {name!r} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ToolError(f"argument {name!r} must be at most {schema['maximum']}")
    if kind == "string":
        if len(value) > schema.get("maxLength", MAX_ARGUMENT_CHARS):
            raise ToolError(f"argument {name!r} is longer than {schema.get('maxLength', MAX_ARGUMENT_CHARS):,} characters")
        if "\x00" in value:
            raise ToolError(f"argument {name!r} holds a NUL character")
    if kind == "array":
        items = schema.get("items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ToolError(f"argument {name!r} has more than {schema['maxItems']} items")
        if items:
            for i, item in enumerate(value):
                _check_value(f"{name}[{i}]", items, item)
