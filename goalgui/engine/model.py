"""The model contract: what the engine sends a model and what it accepts back.

Every provider (HTTP, llama.cpp, scripted, Python plugin) implements `Model`;
the engine knows nothing else about them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class GoalView:
    """What a model may know of the goal a call serves (ids are for routing, not semantics)."""

    id: str
    parent_id: str | None
    depth: int  # the root is depth 0
    text: str


@dataclass(frozen=True)
class ModelRequest:
    """One call to a model. `purpose` tells a provider (and a scripted model) what is asked."""

    purpose: str
    messages: list[dict]
    goal: GoalView | None
    schema: dict | None = None
    tools: list[dict] | None = None
    max_tokens: int | None = None
    deadline: float | None = None  # time.monotonic() by which the call must end
    # "auto"; "required": the reply must call one of `tools` (no text answer); or the name of one
    # of `tools`: the reply calls that one (the model writes only its arguments)
    tool_choice: str = "auto"


@dataclass(frozen=True)
class Usage:
    """Tokens one call spent; `estimated` when the engine counted them, not the provider."""

    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False


@dataclass(frozen=True)
class ModelReply:
    """A model's answer: text and/or tool calls, with what it cost."""

    text: str
    tool_calls: list[dict] = field(default_factory=list)
    usage: Usage = Usage()
    model: str | None = None


@runtime_checkable
class Model(Protocol):
    """Anything that answers a `ModelRequest` asynchronously."""

    name: str

    async def complete(self, request: ModelRequest) -> ModelReply: ...


class ProviderError(Exception):
    """A model could not answer. The run is parked as paused with the reason."""

    kind = "provider error"


class RateLimited(ProviderError):
    """The provider asked us to come back later (HTTP 429)."""

    kind = "rate limited"

    def __init__(self, message: str = "rate limited", retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class ProviderUnavailable(ProviderError):
    """Connection failures, timeouts and server errors that survived retrying."""

    kind = "provider unavailable"


class AuthenticationFailed(ProviderError):
    """The provider refused our credentials."""

    kind = "authentication failed"


class BadResponse(ProviderError):
    """The provider answered with something that is not a reply."""

    kind = "bad response"


def estimate_tokens(text: str) -> int:
    """A provider-free token estimate: about four characters a token, at least one."""
    return max(1, (len(text) + 3) // 4)


def estimate_usage(request: ModelRequest, reply_text: str) -> Usage:
    """Usage counted by the engine when a provider reports none."""
    prompt = sum(len(str(m.get("content", ""))) for m in request.messages)
    return Usage(max(1, (prompt + 3) // 4), estimate_tokens(reply_text), estimated=True)


MAX_TOKENS_REPORTED = 10**9  # more than any context window holds: a count past it is no count
MAX_REPLY_CHARS = 4_000_000


def checked(reply: ModelReply) -> ModelReply:
    """The reply as the engine may store and show it, or BadResponse saying what is wrong with it.

    Whatever a provider or a plugin hands back is checked here, once, for every model: counts
    that are not whole numbers in range (1e20, Infinity, -5, True), text that is not a string
    or too long, lone surrogates (which no file or database can encode), tool calls that are
    not JSON objects with a name. Surrogates are replaced; everything else is refused."""
    import json
    import math

    if not isinstance(reply, ModelReply):
        raise BadResponse(f"the model returned {type(reply).__name__}, not a ModelReply")
    text = reply.text
    if not isinstance(text, str):
        raise BadResponse(f"the reply's text is a {type(text).__name__}, not a string")
    if len(text) > MAX_REPLY_CHARS:
        raise BadResponse(f"the reply's text is {len(text):,} characters (at most {MAX_REPLY_CHARS:,})")
    usage = reply.usage if reply.usage is not None else Usage()
    if not isinstance(usage, Usage):
        raise BadResponse(f"the reply's usage is a {type(usage).__name__}, not a Usage")
    for name in ("input_tokens", "output_tokens"):
        value = getattr(usage, name)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS_REPORTED:
            raise BadResponse(f"the provider reported {name} = {str(value)[:40]}, not a token count")
    calls = reply.tool_calls if reply.tool_calls is not None else []
    if not isinstance(calls, list):
        raise BadResponse(f"the reply's tool calls are a {type(calls).__name__}, not a list")
    calls = [_readable_call(call) for call in calls]
    for call in calls:
        try:
            json.dumps(call, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise BadResponse(f"a tool call cannot be stored: {exc}") from None
    model = reply.model if isinstance(reply.model, str) else None
    clean = _encodable(text)
    clean_calls = json.loads(_encodable(json.dumps(calls, ensure_ascii=False))) if calls else []
    return ModelReply(clean, clean_calls, Usage(int(usage.input_tokens), int(usage.output_tokens), bool(usage.estimated)),
                      _encodable(model[:200]) if model else None)


def _readable_call(call) -> dict:
    """A tool call as the engine handles it. Arguments that are not an object (a small model's
    broken JSON) make the call `invalid`: the model is told so as the call's result, and the run
    goes on; only a call that is not an object at all breaks the reply."""
    if not isinstance(call, dict):
        raise BadResponse("a tool call is not an object with a name and arguments")
    name = call.get("name")
    arguments = call.get("arguments", {})
    if isinstance(name, str) and isinstance(arguments, dict):
        return call
    fixed = {**call, "name": name if isinstance(name, str) else str(name)[:200], "arguments": {}}
    if not isinstance(arguments, dict):
        fixed["invalid"] = f"the arguments must be a JSON object, not {str(arguments)[:200]!r}"
    return fixed


def _encodable(text: str) -> str:
    """`text` with lone surrogates ("\\ud800") replaced: they cannot be written as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")

