"""The strategies, one module each behind the `Strategy` protocol (base.py), and their registry."""

from __future__ import annotations

from ..lifecycle import InputError, Limits, validate_text
from .base import Context, Strategy
from .cursor import Cursor
from .goal_stack import GoalStack
from .plan import Plan
from .task_loop import TaskLoop

# every pattern of the seeds, by its command-line name; those not built yet are refused in one line
STRATEGIES = ("goal-stack", "task-loop", "plan", "cursor")
BUILT: dict[str, type[Strategy]] = {GoalStack.name: GoalStack, TaskLoop.name: TaskLoop, Plan.name: Plan,
                                    Cursor.name: Cursor}
# when each fits, from the seeds' own advice (the New Goal dialog and `--help` show it)
WHEN = {
    "goal-stack": "the tree cannot be drawn in advance: split the goal until each part can be done",
    "task-loop": "loosely coupled items discovered as you go, re-ranked as you learn (sweeps, content, triage)",
    "plan": "the steps and their tools are known up front: a checked plan, independent steps side by side",
    "cursor": "a prompt with a few natural steps, walked forward one at a time with evidence",
}
# the limits a strategy starts with where none is given (the task loop's depth is the task's)
DEFAULT_LIMITS: dict[str, dict] = {"task-loop": {"max_depth": 2, "max_goals": 40, "tokens": 300_000}}


# each strategy's own options (kept in the run's journal, so a resume keeps them): name -> (default, lo, hi)
OPTIONS: dict[str, dict[str, tuple[int, int, int]]] = {
    "task-loop": {"max_iterations": (15, 1, 1000), "max_queue": (20, 1, 1000)},
    "plan": {"max_parallel": (3, 1, 32), "max_steps": (10, 1, 100), "max_replans": (2, 0, 20)},
}


def limits_for(strategy: str, **given) -> Limits:
    """The run's limits: the strategy's defaults (the task loop's depth limit is 2), then those given."""
    return Limits(**DEFAULT_LIMITS.get(strategy, {})).merged(**given)


def strategy_options(strategy: str, **given) -> dict:
    """The strategy's options, defaults filled in; a bad value is refused in one line naming its flag."""
    out = {}
    for name, (default, lo, hi) in OPTIONS.get(strategy, {}).items():
        value = given.get(name)
        value = default if value is None else value
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            flag = "--" + name.replace("_", "-")
            raise InputError(f"bad {flag} {value!r}: give a whole number from {lo} to {hi}")
        out[name] = value
    first = given.get("first_task")
    if first is not None and strategy == "task-loop":
        out["first_task"] = validate_text(first, "first task", 500, empty_ok=False)
    return out


def check_strategy(name: str) -> None:
    """Refuse unknown strategies and those not built yet, with one clear line."""
    if name not in STRATEGIES:
        raise InputError(f"unknown strategy {name!r}: use one of {', '.join(STRATEGIES)}")
    if name not in BUILT:
        raise InputError(f"the {name} strategy is not built yet; use one of {', '.join(BUILT)}")


def strategy_for(name: str, context: Context) -> Strategy:
    check_strategy(name)
    return BUILT[name](context)


__all__ = ["BUILT", "DEFAULT_LIMITS", "OPTIONS", "STRATEGIES", "WHEN", "limits_for", "strategy_options", "Context", "Strategy", "check_strategy", "strategy_for"]
