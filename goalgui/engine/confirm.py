"""Confirmation of what the model proposes: data plus a future.

A `Confirmer` receives a `ConfirmationRequest` and returns an awaitable answer.
The engine records the question and the answer as events; pausing or
cancelling the run while a question is open aborts it (distinct from declined).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Protocol


class Outcome(str, enum.Enum):
    APPROVED = "approved"  # go ahead, possibly with edits and a permission mode
    DECLINED = "declined"  # a person said no: the proposal is dropped
    ABORTED = "aborted"  # nobody answered (the run was paused, cancelled or timed out)


@dataclass(frozen=True)
class ConfirmationRequest:
    """What is proposed. kind 'create_goal': proposal has objective, criteria, limits, mode.
    kind 'subgoals': proposal has parent (text) and subgoals (list of texts)."""

    id: str
    kind: str
    proposal: dict
    mode: str
    draft: dict | None = None  # edits made before a stop, to show again (the confirmer's own fields)
    # the confirmer calls this with its fields as they are edited: journaled, so nothing typed is lost
    save_draft: Callable[[dict], None] | None = field(default=None, compare=False)
    run_id: str = ""  # the run that asks (a window attached to it may answer: `goalgui.remote`)


@dataclass(frozen=True)
class ConfirmationAnswer:
    outcome: Outcome
    mode: str | None = None
    edits: dict = field(default_factory=dict)  # e.g. {"subgoals": [...]} or {"objective": ...}

    @classmethod
    def approve(cls, mode: str | None = None, **edits) -> ConfirmationAnswer:
        return cls(Outcome.APPROVED, mode, edits)

    @classmethod
    def decline(cls) -> ConfirmationAnswer:
        return cls(Outcome.DECLINED)

    @classmethod
    def abort(cls) -> ConfirmationAnswer:
        return cls(Outcome.ABORTED)


class NeedsConfirmation(Exception):
    """No one can answer here (no terminal, no --yes): the run pauses with this reason."""


class Confirmer(Protocol):
    def __call__(self, request: ConfirmationRequest) -> Awaitable[ConfirmationAnswer]: ...


def approve_all(request: ConfirmationRequest) -> Awaitable[ConfirmationAnswer]:
    """The `--yes` confirmer: approve as proposed, keep the mode."""
    return _ready(ConfirmationAnswer.approve(request.mode))


async def _ready(answer: ConfirmationAnswer) -> ConfirmationAnswer:
    return answer


def refuse_unattended(request: ConfirmationRequest) -> Awaitable[ConfirmationAnswer]:
    """For a run with nobody to ask: stop with a reason instead of hanging."""
    raise NeedsConfirmation(f"{request.kind.replace('_', ' ')} needs a person to approve it")


ConfirmerFn = Callable[[ConfirmationRequest], Awaitable[ConfirmationAnswer]]
