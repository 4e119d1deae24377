"""A run's state, built from its events alone.

`RunRecord.apply` is the only way state changes: the live engine calls it as it
emits each event, the journal calls it to restore a run, the window calls it to
replay one. Because there is one reducer, a rebuilt run equals the live one.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from . import events as ev
from .events import plot_marks  # noqa: F401 (where the journal and the window import it from)
from .lifecycle import Limits, RunState


class GoalStatus(str, enum.Enum):
    """Where one goal is."""

    PENDING = "pending"  # waiting to be worked on (or to be worked again after an interruption)
    RUNNING = "running"  # being judged, executed or verified, or its sub-goals are being worked
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"  # a person skipped it
    ABANDONED = "abandoned"  # a stop left it undone


SETTLED = frozenset({GoalStatus.DONE, GoalStatus.FAILED, GoalStatus.SKIPPED, GoalStatus.ABANDONED})


REUSED = "reused finding of"  # how a goal's note says its result is another goal's


@dataclass(slots=True)
class Goal:
    """One node of the goal tree."""

    id: str
    parent_id: str | None
    depth: int
    text: str
    status: GoalStatus = GoalStatus.PENDING
    attempts: int = 0
    result: str = ""
    note: str = ""
    verdict: str = ""
    actionable: bool | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    children: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)  # a strategy's data on the goal (not in the report's goals)

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def report(self) -> dict:
        return {
            "id": self.id,
            "parent_id": self.parent_id,
            "depth": self.depth,
            "text": self.text,
            "status": self.status.value,
            "tokens": self.tokens,
            "attempts": self.attempts,
            "result": self.result,
            "note": self.note,
        }


@dataclass(slots=True)
class Metrics:
    """What a run has spent; it grows only while the run is active."""

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_by_purpose: dict[str, int] = field(default_factory=dict)
    tokens_estimated: int = 0
    turns: int = 0
    model_calls: int = 0
    active_seconds: float = 0.0
    goals_created: int = 0
    max_depth_reached: int = 0
    tool_calls: int = 0
    tool_errors: int = 0

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def report(self, active_seconds: float) -> dict:
        return {
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "tokens": self.tokens,
            "tokens_by_purpose": dict(self.tokens_by_purpose),
            "tokens_estimated": self.tokens_estimated,
            "turns": self.turns,
            "model_calls": self.model_calls,
            "active_seconds": round(active_seconds, 3),
            "goals_created": self.goals_created,
            "max_depth_reached": self.max_depth_reached,
        }


class RunRecord:
    """The projection of one run's events: its tree, lifecycle state, metrics and settings."""

    def __init__(self) -> None:
        self.run_id = ""
        self.objective = ""
        self.criteria = ""
        self.strategy = ""
        self.model = ""
        self.options: dict = {}
        self.limits = Limits()
        self.permission_mode = "auto-edit"
        self.state = RunState.ACTIVE
        self.stop_reason: str | None = None
        self.outcome: str | None = None
        self.summary = ""
        self.state_since = 0.0  # when the run entered its state (a rate limit's wait counts from here)
        self.last_call_goal: str | None = None  # the goal of the latest model call (a rate limit hit it)
        self.summarized_at_calls: int | None = None  # a wrap-up is not written twice for one stop
        self.summarized_reason: str | None = None
        self.operator_messages: list[str] = []
        self.goals: dict[str, Goal] = {}
        self.settled = 0  # goals done, failed, skipped or abandoned (kept so counting is O(1))
        self.done = self.failed = 0  # of those, done and failed (the goal injection shows them every turn)
        self.root_id: str | None = None
        self.metrics = Metrics()
        self.nudged: set[tuple[str, float]] = set()
        self.started_at = 0.0
        self.updated_at = 0.0
        self.last_seq = 0
        self.active_since: float | None = None
        self.pending_confirmation: ev.ConfirmationAsked | None = None
        # questions a stop left unanswered, by (kind, goal id): {"id", "proposal", "draft"}; a split or
        # plan is asked again from here instead of paying the model for it again
        self.unanswered: dict[tuple[str, str | None], dict] = {}
        self.allowed_tools: set[str] = set()  # "Allow this tool for the rest of the run": "tool:effect"
        # per goal, its tool calls in brief (name, decision, ok, arguments cut short), for reports
        self.tool_log: dict[str | None, list[tuple[str, str, bool, str]]] = {}
        self.rounds: dict[str, int] = {}  # per goal, the `work` calls made on it (the cursor's rounds)
        self.duplicates: list[ev.DuplicateRefused] = []  # the task loop's refused pairs
        self.plans: list[ev.PlanMade] = []  # the plan strategy's versions, first to latest
        self.forked_from: dict | None = None  # {"run", "goal", "event"} of a fork's source
        self._handlers = {
            ev.RunStarted: self._run_started,
            ev.RunStateChanged: self._run_state_changed,
            ev.TurnStarted: self._turn_started,
            ev.GoalAdded: self._goal_added,
            ev.GoalChanged: self._goal_changed,
            ev.ModelCalled: self._model_called,
            ev.BudgetNudged: self._budget_nudged,
            ev.LimitsChanged: self._limits_changed,
            ev.PermissionModeChanged: self._mode_changed,
            ev.ConfirmationAsked: self._confirmation_asked,
            ev.ConfirmationDrafted: self._confirmation_drafted,
            ev.ConfirmationAnswered: self._confirmation_answered,
            ev.Summarized: self._summarized,
            ev.OperatorMessage: self._operator_message,
            ev.ToolCalled: self._tool_called,
            ev.DuplicateRefused: self.duplicates.append,
            ev.PlanMade: self.plans.append,
            ev.RunForked: lambda e: setattr(self, "forked_from", {"run": e.source_run, "goal": e.source_goal,
                                                                  "event": e.source_event}),
            ev.GoalOverruled: lambda e: setattr(self.goals[e.goal_id], "text", e.text) if e.action == "edit" else None,
        }

    @classmethod
    def from_events(cls, events) -> RunRecord:
        record = cls()
        for event in events:
            record.apply(event)
        return record

    def apply(self, event: ev.Event) -> None:
        if event.seq <= self.last_seq:
            raise ValueError(f"event {event.seq} arrived after {self.last_seq}")
        self._handlers[type(event)](event)
        self.last_seq = event.seq
        self.updated_at = event.ts

    # -- reading -------------------------------------------------------------

    def active_seconds(self, now: float | None = None) -> float:
        """Seconds spent active; `now` adds the interval still open in a live run."""
        extra = 0.0
        if self.active_since is not None and now is not None:
            extra = max(0.0, now - self.active_since)
        return self.metrics.active_seconds + extra

    def usage(self, now: float | None = None, limits: Limits | None = None) -> dict[str, tuple[float, float]]:
        """Each budget that is set: (used, limit). The goal count always has one."""
        m, lim = self.metrics, limits or self.limits
        out: dict[str, tuple[float, float]] = {"goals": (m.goals_created, lim.max_goals)}
        if lim.tokens is not None:
            out["tokens"] = (m.tokens, lim.tokens)
        if lim.turns is not None:
            out["turns"] = (m.turns, lim.turns)
        if lim.seconds is not None:
            out["time"] = (self.active_seconds(now), lim.seconds)
        return out

    def exhausted(self, now: float | None = None) -> str | None:
        """The stop reason of the first budget at 100%, or None. The goal budget caps how many
        goals exist: N of N stops nothing until a split needs one more (the strategy says so)."""
        for name, (used, limit) in self.usage(now).items():
            if used > limit if name == "goals" else used >= limit:
                return f"budget: {name} ({_fmt(used)} of {_fmt(limit)} used)"
        return None

    def still_blocking(self, limits: Limits | None = None, now: float | None = None) -> tuple[str, str] | None:
        """For a run a budget blocked: (budget, why) when resuming under `limits` (its own by default)
        would stop it again at once, e.g. ("tokens", "the tokens budget is still spent (1,200 of 1,000
        used)"); None when it can go on. The goal budget must leave room for what the block needed."""
        reason = self.stop_reason or ""
        if self.state is not RunState.BLOCKED or not reason.startswith("budget:"):
            return None
        limits = limits or self.limits
        usage = self.usage(now, limits)
        name = reason[len("budget:"):].split()[0] if reason[len("budget:"):].split() else ""
        if name == "goals":
            found = re.search(r"needs at least (\d+) more", reason)
            need = int(found.group(1)) if found else 1
            used, limit = usage["goals"]
            if used + need > limit:
                return "goals", (f"the goal budget is still too small ({_fmt(used)} of {_fmt(limit)} used; "
                                 f"{need} more needed)")
        elif name in usage and usage[name][0] >= usage[name][1]:
            used, limit = usage[name]
            return name, f"the {name} budget is still spent ({_fmt(used)} of {_fmt(limit)} used)"
        for other, (used, limit) in usage.items():  # raising one budget past another that is spent
            if other != "goals" and other != name and used >= limit:
                return other, f"the {other} budget is spent too ({_fmt(used)} of {_fmt(limit)} used)"
        return None

    def converging(self) -> bool:
        """True once any budget passed 75% (the prompts then ask to converge)."""
        return bool(self.nudged)

    def snapshot(self) -> dict:
        """The run's totals after its latest event, as the journal's series keeps them for the plots."""
        m = self.metrics
        return {"ts": self.updated_at, "tokens": m.tokens, "turns": m.turns, "goals": m.goals_created,
                "settled": self.settled, "active": round(self.active_seconds(self.updated_at), 3),
                "purpose": dict(m.tokens_by_purpose), "limits": self.limits.to_dict(), "state": self.state.value,
                "calls": m.model_calls, "depth": m.max_depth_reached, "mode": self.permission_mode,
                "done": self.done, "failed": self.failed, **self._cursor_totals()}

    def _cursor_totals(self) -> dict:
        position = self.task_position() if self.strategy == "cursor" else None
        return {"task": position} if position else {}

    def tasks(self) -> list[Goal]:
        """The cursor's plan: the root's children, in order."""
        root = self.goals.get(self.root_id or "")
        return [self.goals[c] for c in root.children] if root is not None else []

    def active_task(self) -> tuple[int, Goal] | None:
        """The cursor: the first task not settled (1-based number, goal); it only moves forward."""
        for number, task in enumerate(self.tasks(), 1):
            if task.status not in SETTLED:
                return number, task
        return None

    def task_position(self) -> str | None:
        """The cursor's place among the root's tasks as 'N/M' (M/M once all are settled); None before a plan."""
        tasks = self.tasks()
        if not tasks:
            return None
        active = self.active_task()
        return f"{active[0] if active else len(tasks)}/{len(tasks)}"

    def leaves(self) -> list[Goal]:
        return [g for g in self.goals.values() if not g.children]

    def compute_outcome(self) -> str:
        leaves = self.leaves()
        done = sum(1 for g in leaves if g.status is GoalStatus.DONE)
        if leaves and done == len(leaves):
            return "done"
        return "partial" if done else "failed"

    def report(self, now: float | None = None) -> dict:
        """The run report (DESIGN.md's keys; a fork's also has `forked_from`)."""
        fork = {"forked_from": self.forked_from} if self.forked_from else {}
        return {**fork,
            "run_id": self.run_id,
            "objective": self.objective,
            "strategy": self.strategy,
            "model": self.model,
            "state": self.state.value,
            "outcome": self.outcome if self.state is RunState.COMPLETE else None,
            "stop_reason": None if self.state is RunState.COMPLETE else self.stop_reason,
            "summary": self.summary,
            "metrics": self.metrics.report(self.active_seconds(now)),
            "goals": [g.report() for g in self.goals.values()],
        }

    # -- reducers ------------------------------------------------------------

    def _run_started(self, e: ev.RunStarted) -> None:
        self.run_id, self.objective, self.strategy = e.run_id, e.objective, e.strategy
        self.model, self.criteria = e.model, e.criteria
        self.options = dict(e.options or {})
        self.limits = Limits.from_dict(e.limits)
        self.permission_mode = e.permission_mode
        self.state = RunState.ACTIVE
        self.started_at = e.ts
        self.active_since = e.ts

    def _run_state_changed(self, e: ev.RunStateChanged) -> None:
        new = RunState(e.state)
        if self.active_since is not None:
            end = e.ts if e.active_until is None else min(e.ts, e.active_until)
            self.metrics.active_seconds += max(0.0, end - self.active_since)
            self.active_since = None
        self.state_since = e.ts
        if new is RunState.ACTIVE:
            self.active_since = e.ts
            self.stop_reason = None
        else:
            self.stop_reason = e.reason
        if e.outcome is not None:
            self.outcome = e.outcome
        self.state = new

    def _turn_started(self, e: ev.TurnStarted) -> None:
        self.metrics.turns += 1
        if e.goal_id is not None:
            goal = self.goals[e.goal_id]
            if goal.status in SETTLED:
                self.settled -= 1
            self._count(goal.status, -1)
            goal.status = GoalStatus.RUNNING
            goal.updated_at = e.ts

    def _count(self, status: GoalStatus, step: int) -> None:
        if status is GoalStatus.DONE:
            self.done += step
        elif status is GoalStatus.FAILED:
            self.failed += step

    def _goal_added(self, e: ev.GoalAdded) -> None:
        goal = Goal(e.goal_id, e.parent_id, e.depth, e.text, created_at=e.ts, updated_at=e.ts)
        if e.facts:
            goal.facts.update(e.facts)
        self.goals[e.goal_id] = goal
        if e.parent_id is None:
            self.root_id = self.root_id or e.goal_id
        else:
            self.goals[e.parent_id].children.append(e.goal_id)
        self.metrics.goals_created += 1
        if e.depth > self.metrics.max_depth_reached:
            self.metrics.max_depth_reached = e.depth

    def _goal_changed(self, e: ev.GoalChanged) -> None:
        g = self.goals[e.goal_id]
        if e.status is not None:
            new = GoalStatus(e.status)
            self.settled += (new in SETTLED) - (g.status in SETTLED)
            self._count(g.status, -1)
            self._count(new, 1)
            g.status = new
        if e.result is not None:
            g.result = e.result
        if e.note is not None:
            g.note = e.note
        if e.attempts is not None:
            g.attempts = e.attempts
        if e.verdict is not None:
            g.verdict = e.verdict
        if e.actionable is not None:
            g.actionable = e.actionable
        if e.facts:
            for key, value in e.facts.items():
                if value is None:
                    g.facts.pop(key, None)
                else:
                    g.facts[key] = value
        g.updated_at = e.ts

    def _model_called(self, e: ev.ModelCalled) -> None:
        m = self.metrics
        m.model_calls += 1
        m.tokens_in += e.tokens_in
        m.tokens_out += e.tokens_out
        spent = e.tokens_in + e.tokens_out
        m.tokens_by_purpose[e.purpose] = m.tokens_by_purpose.get(e.purpose, 0) + spent
        if e.estimated:
            m.tokens_estimated += spent
        self.last_call_goal = e.goal_id
        goal = self.goals.get(e.goal_id) if e.goal_id else None
        if e.purpose == "work" and e.goal_id and not e.cancelled:  # the cursor's rounds of a task
            self.rounds[e.goal_id] = self.rounds.get(e.goal_id, 0) + 1
        if goal is not None:
            goal.tokens_in += e.tokens_in
            goal.tokens_out += e.tokens_out

    def _budget_nudged(self, e: ev.BudgetNudged) -> None:
        self.nudged.add((e.budget, e.limit))

    def _limits_changed(self, e: ev.LimitsChanged) -> None:
        self.limits = Limits.from_dict(e.limits)
        usage = self.usage(e.ts)
        # A raised budget below 75% again may nudge again later.
        self.nudged = {
            (name, limit) for name, limit in self.nudged
            if name in usage and usage[name][1] == limit
        }

    def _mode_changed(self, e: ev.PermissionModeChanged) -> None:
        self.permission_mode = e.mode

    def _confirmation_asked(self, e: ev.ConfirmationAsked) -> None:
        self.pending_confirmation = e
        key = (e.kind, e.goal_id)
        prior = self.unanswered.get(key)
        # asked again with the same proposal (after a pause, a close, a crash): the edits carry over
        draft = prior["draft"] if prior is not None and prior["proposal"] == e.proposal else None
        self.unanswered[key] = {"id": e.confirmation_id, "proposal": e.proposal, "draft": draft}

    def _confirmation_drafted(self, e: ev.ConfirmationDrafted) -> None:
        for entry in self.unanswered.values():
            if entry["id"] == e.confirmation_id:
                entry["draft"] = e.draft

    def _confirmation_answered(self, e: ev.ConfirmationAnswered) -> None:
        asked = self.pending_confirmation
        if (asked is not None and asked.kind == "tool" and e.outcome == "approved" and e.edits
                and e.edits.get("always")):
            # per tool and side effect: allowing a command does not allow one with the network
            self.allowed_tools.add(f"{asked.proposal.get('tool')}:{asked.proposal.get('effect')}")
        self.pending_confirmation = None
        if e.outcome != "aborted":  # answered: nothing to ask again; aborted (a stop): kept, with its draft
            for key, entry in list(self.unanswered.items()):
                if entry["id"] == e.confirmation_id:
                    del self.unanswered[key]

    def _tool_called(self, e: ev.ToolCalled) -> None:
        self.metrics.tool_calls += 1
        if not e.ok:
            self.metrics.tool_errors += 1
        log = self.tool_log.setdefault(e.goal_id, [])
        if len(log) < TOOL_LOG_PER_GOAL:
            brief = ", ".join(f"{k}={str(v)[:60]}" for k, v in list(e.arguments.items())[:3])
            log.append((e.name, e.decision, e.ok, brief[:160]))

    def _summarized(self, e: ev.Summarized) -> None:
        self.summary = e.text
        self.summarized_at_calls = self.metrics.model_calls
        self.summarized_reason = e.reason

    def _operator_message(self, e: ev.OperatorMessage) -> None:
        self.operator_messages.append(e.text)


INTERRUPTED = "interrupted: the process driving the run ended"
TOOL_LOG_PER_GOAL = 50


def goal_from_events(events) -> Goal | None:
    """One goal as its own events (from the journal's goal index) leave it."""
    record = RunRecord()
    for e in events:
        if type(e) is ev.GoalAdded:
            record.goals[e.goal_id] = Goal(e.goal_id, e.parent_id, e.depth, e.text, created_at=e.ts, updated_at=e.ts,
                                           facts=dict(e.facts or {}))
        elif e.goal_id in record.goals:
            record._handlers[type(e)](e)
    return next(iter(record.goals.values()), None)


def interruption(record: RunRecord) -> list[tuple[type[ev.Event], dict]]:
    """The events that restore a run whose driving process died while it was active:
    what was running waits to run again, and the run is paused."""
    if record.state is not RunState.ACTIVE:
        return []
    out: list[tuple[type[ev.Event], dict]] = [
        (ev.GoalChanged, {"goal_id": g.id, "status": GoalStatus.PENDING.value})
        for g in record.goals.values() if g.status is GoalStatus.RUNNING
    ]
    out.append((ev.RunStateChanged, {"state": RunState.PAUSED.value, "reason": INTERRUPTED,
                                     "active_until": record.updated_at}))
    return out


def _fmt(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() or value >= 100 else f"{value:.1f}"
