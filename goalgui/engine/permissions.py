"""Permission modes and the one table that decides what runs, what asks and what is held.

The operator picks a mode per run (and may change it mid-run). Every action with a consequence
asks `decide(mode, action)` and gets one answer: run it, ask the operator, hold it for review
(plan mode: it waits in the tree or the plan), or refuse it (plan mode: a side effect the model is
told it may not have). No strategy or tool compares mode names itself.
"""

from __future__ import annotations

import enum

from .lifecycle import InputError


class PermissionMode(str, enum.Enum):
    ASK = "ask"  # every consequence is confirmed
    AUTO_EDIT = "auto-edit"  # reads and workspace writes run; shell and network are confirmed
    AUTO = "auto"  # nothing is confirmed (the sandbox still holds)
    PLAN = "plan"  # nothing with a side effect; the work is planned and held for review

    @classmethod
    def of(cls, value: str | PermissionMode) -> PermissionMode:
        """The mode named `value`; an unknown name is refused in one line."""
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise InputError(f"unknown permission mode {value!r}: use one of {names}") from None


PERMISSION_MODES = tuple(m.value for m in PermissionMode)


def validate_permission_mode(mode: str) -> str:
    """The mode's name, checked (events and settings keep the name)."""
    return PermissionMode.of(mode).value


class Action(str, enum.Enum):
    """A kind of action a strategy or a tool takes."""

    SUBGOALS = "subgoals"  # a decomposition adds sub-goals
    PLAN = "plan"  # a plan of steps (the plan and cursor strategies)
    CREATE_GOAL = "create_goal"  # the model starts a goal of its own (goal mode's CreateGoal)
    EXECUTE = "execute"  # a goal is worked on (answered in text, or with tools)
    READ = "read"  # a tool that only reads the workspace or the run's memory
    WRITE = "write"  # a tool that writes inside the workspace
    SHELL = "shell"  # a command in the sandbox
    NETWORK = "network"  # a request to another host


class Decision(str, enum.Enum):
    RUN = "run"
    ASK = "ask"
    HOLD = "hold"  # kept for review: it waits, nothing is lost
    REFUSE = "refuse"  # not in this mode: the model is told why


_P, _A, _E, _U = PermissionMode.PLAN, PermissionMode.ASK, PermissionMode.AUTO_EDIT, PermissionMode.AUTO
R, Q, H, X = Decision.RUN, Decision.ASK, Decision.HOLD, Decision.REFUSE

# (plan, ask, auto-edit, auto), as DESIGN.md's table has it; EXECUTE is what plan mode holds
TABLE: dict[Action, dict[PermissionMode, Decision]] = {
    action: dict(zip((_P, _A, _E, _U), row)) for action, row in {
        Action.SUBGOALS: (H, Q, R, R),  # held: added to the tree, where nothing is executed in plan mode
        Action.PLAN: (H, Q, R, R),
        Action.CREATE_GOAL: (Q, Q, Q, R),
        Action.EXECUTE: (H, R, R, R),
        Action.READ: (R, R, R, R),
        Action.WRITE: (X, Q, R, R),
        Action.SHELL: (X, Q, Q, R),
        Action.NETWORK: (X, Q, Q, R),
    }.items()
}


def decide(mode: str | PermissionMode, action: Action) -> Decision:
    return TABLE[action][PermissionMode.of(mode)]


def refusal(mode: str | PermissionMode, action: Action) -> str:
    """What a model is told when `action` is refused in `mode`."""
    return (f"refused: the run is in {PermissionMode.of(mode).value} mode, where a {action.value} action "
            "is not allowed; describe what you would do instead")
