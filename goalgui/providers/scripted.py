"""A model that answers from a script: offline rehearsals, demos and reproducible runs.

The script is JSON (its format is in the README). Rules are tried in order and
the first that matches the request's purpose, goal text and depth answers;
`replies` lists are cycled per rule; token counts are fixed by the rule or
counted from the text, so the same script always costs the same.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path

from ..engine.lifecycle import InputError
from ..engine.model import (
    AuthenticationFailed,
    BadResponse,
    ModelReply,
    ModelRequest,
    ProviderUnavailable,
    RateLimited,
    Usage,
    estimate_tokens,
)

_ERRORS = {
    "rate_limited": lambda msg, rule: RateLimited(msg, rule.get("retry_after")),
    "unavailable": lambda msg, rule: ProviderUnavailable(msg),
    "authentication": lambda msg, rule: AuthenticationFailed(msg),
    "bad_response": lambda msg, rule: BadResponse(msg),
}
_RULE_KEYS = {"purpose", "match", "depth", "min_depth", "max_depth", "reply", "replies", "usage",
              "tool_calls", "error", "retry_after", "latency", "times"}


class ScriptError(InputError):
    """The script file is missing or malformed."""


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class ScriptedModel:
    """Answers each request from the first matching rule of a script."""

    def __init__(self, script: dict, *, name: str = "scripted", latency: float | None = None):
        self.script = _validate(script)
        self.name = script.get("name", name)
        self.latency = float(script.get("latency", 0.0) if latency is None else latency)
        self._rules = list(self.script.get("rules", []))
        self._counters = [0] * len(self._rules)
        self.calls: list[ModelRequest] = []

    @classmethod
    def from_spec(cls, target: str) -> ScriptedModel:
        """`NAME` (a script shipped in the package) or a path to a JSON file."""
        path = Path(target).expanduser()
        if target.endswith(".json") or path.exists():
            if not path.is_file():
                raise ScriptError(f"no script file {target}")
            try:
                script = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise ScriptError(f"cannot read script {target}: {exc}") from None
            return cls(script, name=path.stem)
        shipped = resources.files("goalgui.providers").joinpath("scripts", f"{target}.json")
        if not shipped.is_file():
            raise ScriptError(f"no shipped script {target!r}: give a .json file path or use scripted:rehearsal")
        return cls(json.loads(shipped.read_text(encoding="utf-8")), name=target)

    def _match(self, request: ModelRequest) -> tuple[int, dict] | None:
        text = (request.goal.text if request.goal else "").lower()
        depth = request.goal.depth if request.goal else -1
        for index, rule in enumerate(self._rules):
            purpose = rule.get("purpose")
            if purpose is not None and request.purpose not in ([purpose] if isinstance(purpose, str) else purpose):
                continue
            if "match" in rule and rule["match"].lower() not in text:
                continue
            if "depth" in rule and depth != rule["depth"]:
                continue
            if "min_depth" in rule and depth < rule["min_depth"]:
                continue
            if "max_depth" in rule and depth > rule["max_depth"]:
                continue
            if "times" in rule and self._counters[index] >= rule["times"]:
                continue
            return index, rule
        return None

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.calls.append(request)
        found = self._match(request)
        if found is None:
            default = self.script.get("defaults", {}).get(request.purpose)
            if default is None:
                raise BadResponse(f"the script has no reply for purpose {request.purpose!r}")
            index, rule = -1, {"reply": default}
        else:
            index, rule = found
        count = self._counters[index] if index >= 0 else 0
        if index >= 0:
            self._counters[index] += 1
        delay = float(rule.get("latency", self.latency))
        if delay > 0:
            await asyncio.sleep(delay)
        if "error" in rule:
            raise _ERRORS[rule["error"]](f"scripted {rule['error'].replace('_', ' ')}", rule)
        if "replies" in rule:
            replies = rule["replies"]
            reply = _text(replies[count % len(replies)])
        else:
            reply = _text(rule.get("reply", ""))
        if "usage" in rule:
            usage = Usage(int(rule["usage"][0]), int(rule["usage"][1]))
        else:
            prompt = sum(len(str(m.get("content", ""))) for m in request.messages)
            usage = Usage(estimate_tokens("x" * prompt), estimate_tokens(reply))
        return ModelReply(reply, list(rule.get("tool_calls", [])), usage, self.name)


def _validate(script) -> dict:
    if not isinstance(script, dict):
        raise ScriptError("a script is a JSON object with 'rules' and/or 'defaults'")
    rules = script.get("rules", [])
    if not isinstance(rules, list):
        raise ScriptError("'rules' must be a list")
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise ScriptError(f"rule {i} is not an object")
        unknown = set(rule) - _RULE_KEYS
        if unknown:
            raise ScriptError(f"rule {i} has unknown keys: {', '.join(sorted(unknown))}")
        if "error" in rule and rule["error"] not in _ERRORS:
            raise ScriptError(f"rule {i}: error must be one of {', '.join(_ERRORS)}")
        if "replies" in rule and (not isinstance(rule["replies"], list) or not rule["replies"]):
            raise ScriptError(f"rule {i}: 'replies' must be a non-empty list")
        if "usage" in rule and (not isinstance(rule["usage"], list) or len(rule["usage"]) != 2):
            raise ScriptError(f"rule {i}: 'usage' must be [input_tokens, output_tokens]")
    if not isinstance(script.get("defaults", {}), dict):
        raise ScriptError("'defaults' must map purposes to replies")
    return script
