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
