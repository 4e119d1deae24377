"""Every change of a run's state is one of these events.

Events are frozen, numbered (`seq`, from 1 within a run) and stamped (`ts`,
seconds since the epoch). The engine applies them to its own state through the
same reducer the journal uses to rebuild a run, so the live view and a replay
cannot disagree. `to_record`/`from_record` give the JSON-able form the journal
stores; nothing secret is ever put in an event.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of all events."""

    type: ClassVar[str] = "event"
    seq: int
    ts: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(Event):
    """A run was created with its objective, strategy, model spec, limits and mode."""

    type: ClassVar[str] = "run_started"
    run_id: str
    objective: str
    strategy: str
    model: str
    limits: dict
    permission_mode: str
    criteria: str = ""
    options: dict | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStateChanged(Event):
    """The run moved along the lifecycle table; `reason` says why it stopped."""

    type: ClassVar[str] = "run_state_changed"
    state: str
    reason: str | None = None
    outcome: str | None = None
    # when the active time this change closes really ended, if before `ts`: a run restored after
    # its process died was active only until that process's last event, not through the downtime
    active_until: float | None = None
    health: dict | None = None  # the strategy's health figures when the run stops (`engine.health`)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted(Event):
    """One unit of work began (in the goal stack: one goal taken off the stack); its goal is running."""

    type: ClassVar[str] = "turn_started"
    goal_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalAdded(Event):
    """A goal entered the tree."""

    type: ClassVar[str] = "goal_added"
    goal_id: str
    parent_id: str | None
    depth: int
    text: str
    facts: dict | None = None  # what a strategy keeps on the goal as data (a task's priority, a step's tool)


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalChanged(Event):
    """Some fields of one goal changed; None means unchanged."""

    type: ClassVar[str] = "goal_changed"
    goal_id: str
    status: str | None = None
    result: str | None = None
    note: str | None = None
    attempts: int | None = None
    verdict: str | None = None
    actionable: bool | None = None
    facts: dict | None = None  # merged into the goal's facts (a key set to None is removed)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCalled(Event):
    """A model call ended (or was cancelled): what was asked, answered and spent."""

    type: ClassVar[str] = "model_called"
    goal_id: str | None
    purpose: str
    tokens_in: int
    tokens_out: int
    estimated: bool
    latency: float
    model: str | None
    messages: list
    reply: str
    tool_calls: list | None = None
    error: str | None = None
    cancelled: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(Event):
    """A tool call made on behalf of a goal."""

    type: ClassVar[str] = "tool_called"
    goal_id: str | None
    name: str
    arguments: dict
    result: str  # what the model was given back (cut to the tool's cap)
    call_id: str = ""
    effect: str = ""  # read, write, shell, network ("" for a name no tool has)
    decision: str = ""  # run, allowed, allowed for the run, denied, refused, invalid, failed
    ok: bool = True  # False: the result is an error the model reads
    seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetNudged(Event):
    """A budget passed 75%: prompts now ask the model to converge."""

    type: ClassVar[str] = "budget_nudged"
    budget: str
    used: float
    limit: float


@dataclass(frozen=True, slots=True, kw_only=True)
class LimitsChanged(Event):
    """Limits were raised or lowered during the run."""

    type: ClassVar[str] = "limits_changed"
    limits: dict


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionModeChanged(Event):
    """The permission mode changed."""

    type: ClassVar[str] = "permission_mode_changed"
    mode: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmationAsked(Event):
    """The engine waits for a person to approve something the model proposed."""

    type: ClassVar[str] = "confirmation_asked"
    confirmation_id: str
    kind: str
    proposal: dict
    goal_id: str | None = None  # the goal it is about (a split, a tool call), to ask again after a stop


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmationDrafted(Event):
    """What the person has edited so far in an open confirmation (journaled as they type, so a pause,
    a closed window or a crash keeps it; the dialog's own fields, shown again when it is asked again)."""

    type: ClassVar[str] = "confirmation_drafted"
    confirmation_id: str
    draft: dict


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfirmationAnswered(Event):
    """The answer: approved (with a mode and edits), declined or aborted."""

    type: ClassVar[str] = "confirmation_answered"
    confirmation_id: str
    outcome: str
    mode: str | None = None
    edits: dict | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Summarized(Event):
    """The wrap-up written when the run completed or was blocked."""

    type: ClassVar[str] = "summarized"
    text: str
    reason: str | None = None  # the stop it wraps up (None: complete)


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorMessage(Event):
    """What the operator told the model (on a resume, typically what a blocked run asked for):
    shown to it, as data, at every turn boundary from the next one on."""

    type: ClassVar[str] = "operator_message"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateRefused(Event):
    """The task loop refused a new task as a duplicate of one it has: exactly the same words ("exact")
    or an embedding at or above the threshold ("similar"). Logged so the threshold can be judged."""

    type: ClassVar[str] = "duplicate_refused"
    text: str
    match_id: str
    match_text: str
    similarity: float
    how: str  # exact or similar
    creator_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanMade(Event):
    """The plan strategy's plan, version by version (a replan adds one): each step as
    {"step", "goal_id", "goal", "tool", "dependencies"}; `reason` says why this version exists."""

    type: ClassVar[str] = "plan_made"
    version: int
    steps: list
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalOverruled(Event):
    """The operator overruled the model on a goal (`engine.overrule`): split, do, accept, redo or
    edit, with the operator's note; `text` is an edit's new text. The goal changes it makes follow."""

    type: ClassVar[str] = "goal_overruled"
    goal_id: str
    action: str
    note: str = ""
    text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunForked(Event):
    """This run's history up to here is `source_run`'s, to its event `source_event` (forked at its goal
    `source_goal`, or at that event); what follows is this run's own."""

    type: ClassVar[str] = "run_forked"
    source_run: str
    source_goal: str | None
    source_event: int


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        RunStarted,
        RunStateChanged,
        TurnStarted,
        GoalAdded,
        GoalChanged,
        ModelCalled,
        ToolCalled,
        BudgetNudged,
        LimitsChanged,
        PermissionModeChanged,
        ConfirmationAsked,
        ConfirmationDrafted,
        ConfirmationAnswered,
        Summarized,
        OperatorMessage,
        DuplicateRefused,
        PlanMade,
        RunForked,
        GoalOverruled,
    )
}

_PAYLOAD_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls) if f.name not in ("seq", "ts"))
    for cls in EVENT_TYPES.values()
}


def payload(event: Event) -> dict[str, Any]:
    """The event's own fields (without type, seq and ts), JSON-able."""
    return {name: getattr(event, name) for name in _PAYLOAD_FIELDS[type(event)]}


def from_payload(type_name: str, seq: int, ts: float, data: dict) -> Event:
    """Rebuild an event from what the journal stored. Unknown fields are ignored."""
    cls = EVENT_TYPES[type_name]
    names = _PAYLOAD_FIELDS[cls]
    return cls(seq=seq, ts=ts, **{k: v for k, v in data.items() if k in names})


def plot_marks(events) -> list[tuple[str, float, str]]:
    """What a batch did that the budget plots mark: ("nudge", ts, budget), ("paused", ts, reason),
    ("blocked", ts, reason), ("resumed", ts, ""), ("limits", ts, "") when a limit changed."""
    marks = []
    for e in events:
        t = type(e)
        if t is BudgetNudged:
            marks.append(("nudge", e.ts, e.budget))
        elif t is RunStateChanged:
            if e.state in ("paused", "blocked"):
                marks.append((e.state, e.ts, e.reason or ""))
            elif e.state == "active" and e.seq > 2:  # not the start: a resume
                marks.append(("resumed", e.ts, ""))
        elif t is LimitsChanged and e.seq > 2:
            marks.append(("limits", e.ts, ""))
    return marks
