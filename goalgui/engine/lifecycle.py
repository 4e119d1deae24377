"""The run lifecycle of seed 001: states, the transition table, limits and their validation."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import asdict, dataclass, replace

MAX_OBJECTIVE_CHARS = 4000


class InputError(ValueError):
    """Bad input from a person: the message is one line that says what to change."""


class IllegalTransition(RuntimeError):
    """A lifecycle change the table does not allow."""


class RunState(str, enum.Enum):
    """Where a run is in its life."""

    ACTIVE = "active"  # the driver is working on it; only this state runs turns
    PAUSED = "paused"  # set aside by a person, an interruption or a provider error; resumable
    BLOCKED = "blocked"  # a budget is spent or the model hit a real blocker; resumable
    COMPLETE = "complete"  # the strategy has no work left; final
    CANCELLED = "cancelled"  # cleared by a person; final, kept only as a record

    @property
    def final(self) -> bool:
        """Nothing more can happen to the run (complete or cancelled)."""
        return self in (RunState.COMPLETE, RunState.CANCELLED)

    @property
    def resumable(self) -> bool:
        """Set aside and able to go on (paused or blocked)."""
        return self in (RunState.PAUSED, RunState.BLOCKED)


TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    RunState.ACTIVE: frozenset({RunState.PAUSED, RunState.BLOCKED, RunState.COMPLETE, RunState.CANCELLED}),
    RunState.PAUSED: frozenset({RunState.ACTIVE, RunState.CANCELLED}),
    RunState.BLOCKED: frozenset({RunState.ACTIVE, RunState.CANCELLED}),
    RunState.COMPLETE: frozenset(),
    RunState.CANCELLED: frozenset(),
}


class StopRun(Exception):
    """Raised inside a step to stop the run as blocked with `reason`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class BudgetExhausted(StopRun):
    """A budget reached 100%."""


class Blocked(StopRun):
    """The model declared a real blocker."""


def check_transition(current: RunState, new: RunState) -> None:
    """Raise `IllegalTransition` unless the table allows current -> new."""
    if new not in TRANSITIONS[current]:
        raise IllegalTransition(f"a {current.value} run cannot become {new.value}")


def _encodable(text: str, what: str) -> None:
    """Text from a command line whose bytes were not UTF-8 holds lone surrogates (Python's escape
    for them): no journal, model or terminal can take it, so it is refused here, in one line."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"the {what} holds bytes that are not UTF-8 text; type it again") from None


def validate_objective(text: str) -> str:
    """The objective, stripped; an empty, over-long or undecodable one is refused."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("the objective is empty: say what the run should achieve")
    _encodable(text, "objective")
    text = text.strip()
    if len(text) > MAX_OBJECTIVE_CHARS:
        raise InputError(
            f"the objective is {len(text)} characters; the limit is {MAX_OBJECTIVE_CHARS}"
        )
    return text


def validate_text(text: str, what: str, most: int = MAX_OBJECTIVE_CHARS, *, empty_ok: bool = True) -> str:
    """Operator text other than the objective (criteria, a message to the model), stripped; one
    over `most` characters, or empty where it must say something, is refused in one line."""
    if not isinstance(text, str):
        raise InputError(f"the {what} must be text")
    _encodable(text, what)
    text = text.strip()
    if not text and not empty_ok:
        raise InputError(f"the {what} is empty")
    if len(text) > most:
        raise InputError(f"the {what} is {len(text)} characters; the limit is {most}")
    return text


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$", re.IGNORECASE)
_UNIT = {None: 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}


def parse_duration(text: str | float | int) -> float:
    """'90s', '10m', '2h' or a number of seconds, as seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    match = _DURATION.match(str(text))
    if not match:
        raise InputError(f"bad time budget {text!r}: write it like 90s, 10m or 2h")
    unit = match.group(2).lower() if match.group(2) else None
    return float(match.group(1)) * _UNIT[unit]


@dataclass(frozen=True)
class Limits:
    """Depth and goal count always have a limit; tokens, turns and seconds are opt-in."""

    max_depth: int = 3
    max_goals: int = 25
    tokens: int | None = None
    turns: int | None = None
    seconds: float | None = None

    def validated(self) -> Limits:
        """A copy with every value checked; raises `InputError` with one clear line."""
        _whole("max depth", self.max_depth, minimum=0, maximum=50)
        _whole("max goals", self.max_goals, minimum=1, maximum=10_000_000)
        if self.tokens is not None:
            _whole("token budget", self.tokens, minimum=1, maximum=10**12)
        if self.turns is not None:
            _whole("turn budget", self.turns, minimum=1, maximum=10**9)
        if self.seconds is not None:
            s = self.seconds
            if isinstance(s, bool) or not isinstance(s, (int, float)) or math.isnan(s):
                raise InputError(f"bad time budget {s!r}: give seconds between 1 and 86400")
            if not 1 <= s <= 86400:
                raise InputError(f"time budget {s:g}s is out of range: it must be between 1 s and 24 h")
        return replace(self, seconds=None if self.seconds is None else float(self.seconds))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Limits:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})

    def merged(self, clear: tuple[str, ...] | list[str] = (), **changes) -> Limits:
        """These limits with the given ones replaced (None values leave a limit as it is) and the opt-in
        budgets named in `clear` (tokens, turns, seconds) removed."""
        for name in clear:
            if name not in OPT_IN:
                raise InputError(f"the {name} limit cannot be cleared: only {', '.join(OPT_IN)} are optional")
        kept = {k: v for k, v in changes.items() if v is not None}
        return replace(self, **kept, **{n: None for n in clear if n not in kept}).validated()


OPT_IN = ("tokens", "turns", "seconds")  # budgets a run may have or not; depth and goal count always apply


def _whole(label: str, value, *, minimum: int, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"bad {label} {value!r}: it must be a whole number")
    if not minimum <= value <= maximum:
        raise InputError(f"{label} {value} is out of range: it must be between {minimum} and {maximum}")
