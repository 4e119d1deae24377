"""The strategies, one module each behind the `Strategy` protocol (base.py), and their registry."""

from __future__ import annotations

from ..lifecycle import InputError
from .base import Context, Strategy
from .cursor import Cursor
from .goal_stack import GoalStack

# every pattern of the seeds, by its command-line name; those not built yet are refused in one line
STRATEGIES = ("goal-stack", "task-loop", "plan", "cursor")
BUILT: dict[str, type[Strategy]] = {GoalStack.name: GoalStack, Cursor.name: Cursor}


def check_strategy(name: str) -> None:
    """Refuse unknown strategies and those not built yet, with one clear line."""
    if name not in STRATEGIES:
        raise InputError(f"unknown strategy {name!r}: use one of {', '.join(STRATEGIES)}")
    if name not in BUILT:
        raise InputError(f"the {name} strategy is not built yet; use one of {', '.join(BUILT)}")


def strategy_for(name: str, context: Context) -> Strategy:
    check_strategy(name)
    return BUILT[name](context)


__all__ = ["BUILT", "STRATEGIES", "Context", "Strategy", "check_strategy", "strategy_for"]
