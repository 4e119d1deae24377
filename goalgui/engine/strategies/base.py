"""The shape every strategy has: the `Strategy` protocol and the narrow `Context` it is handed.

A strategy derives all its working state from the run's record (`rebuild`), so a restored,
replayed or resumed run is the same code path as a live one. It says whether it has work and
takes one step at a time; the run drives it, checks budgets between steps, and turns what a
step raises (a stop, a provider error, a needed confirmation) into the run's state.

It never sees the `Run`: the context gives it the record to read, the tree operations, model
calls, confirmations, the findings memory, the tools and the permission decision, and nothing
else, so a new strategy is one module that cannot reach into the driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..events import DuplicateRefused, PlanMade
from ..permissions import Action, Decision, decide

if TYPE_CHECKING:  # only names for the annotations
    from ..confirm import ConfirmationAnswer
    from ..memory import FindingsMemory
    from ..model import ModelReply
    from ..record import Goal, RunRecord


class Strategy(Protocol):
    name: ClassVar[str]
    current_goal_id: str | None  # the goal a step is working on (skip cancels that step)

    def __init__(self, context: Context) -> None: ...

    def rebuild(self) -> None:
        """Derive the working state (stack, cursor, queue, plan) from the record."""

    def has_work(self) -> bool: ...

    def planned(self) -> bool:
        """True when work waits for review (plan mode held it): the run pauses with the plan."""

    async def step(self) -> None:
        """One turn of work; may raise StopRun, a ProviderError or NeedsConfirmation."""

    def outcome(self) -> str:
        """What a completed run achieved: done, partial, failed (the plan adds gave_up)."""

    def cancel_goals(self, ids: set[str]) -> bool:
        """Stop the work on these goals (being skipped) if this strategy runs several at once and
        is working on one of them: True when it did, False to let the run cancel the step."""

    def finishing(self) -> None:
        """The last changes before the run completes (the plan settles its root by its final version)."""


class BaseStrategy:
    """What most strategies share: the outcome by the leaves, one goal worked at a time."""

    ctx: Context

    def outcome(self) -> str:
        return self.ctx.record.compute_outcome()

    def cancel_goals(self, ids: set[str]) -> bool:
        return False

    def finishing(self) -> None:
        return None


class Context:
    """What a strategy may use of its run. Built by the run; holds it privately."""

    __slots__ = ("_run",)

    def __init__(self, run: Any):
        self._run = run

    @property
    def record(self) -> RunRecord:
        return self._run.record

    @property
    def prompts(self):
        """The prompt module for this model (`prompts` or `prompts_small`)."""
        return self._run.prompts

    @property
    def memory(self) -> FindingsMemory:
        return self._run.memory

    @property
    def tools(self):
        """The run's tools (a `Toolbox`), or None when the run has none."""
        return self._run.tools

    def decide(self, action: Action) -> Decision:
        """Run, ask, hold or refuse `action` in the run's permission mode (permissions.TABLE)."""
        return decide(self._run.record.permission_mode, action)

    def asked_before(self, kind: str, goal: Goal) -> list[str] | None:
        """The split ("subgoals") or plan a stop left unanswered for `goal`, to ask again with the edits
        made so far instead of paying the model for another, when this mode still asks; else None."""
        proposal = self.unanswered(kind, goal)
        return None if proposal is None else [str(t) for t in proposal.get("subgoals", [])]

    def unanswered(self, kind: str, goal: Goal) -> dict | None:
        """The whole proposal `asked_before` reads the texts of (the plan strategy keeps its steps in it)."""
        asked = self._run.record.unanswered.get((kind, goal.id))
        if asked is None or self.decide(Action.PLAN if kind == "plan" else Action.SUBGOALS) is not Decision.ASK:
            return None
        return asked["proposal"]

    def add_goal(self, parent: Goal | None, text: str, facts: dict | None = None) -> Goal:
        return self._run.add_goal(parent, text, facts)

    def log_duplicate(self, **fields) -> None:
        """Journal a refused duplicate task (`events.DuplicateRefused`)."""
        self._run.emit(DuplicateRefused, **fields)

    def log_plan(self, version: int, steps: list[dict], reason: str) -> None:
        """Journal a version of the plan (`events.PlanMade`)."""
        self._run.emit(PlanMade, version=version, steps=steps, reason=reason)

    def set_goal(self, goal: Goal, **changes) -> None:
        self._run.set_goal(goal, **changes)

    def settle_parents(self, goal: Goal) -> None:
        self._run.settle_parents(goal)

    def begin_turn(self, goal: Goal | None) -> None:
        self._run.begin_turn(goal)

    async def call_model(self, purpose: str, messages: list[dict], goal: Goal | None, *, schema: dict | None = None,
                         tools: list[dict] | None = None, max_tokens: int | None = None,
                         tool_choice: str = "auto") -> ModelReply:
        return await self._run.call_model(purpose, messages, goal, schema=schema, tools=tools,
                                          max_tokens=max_tokens, tool_choice=tool_choice)

    async def confirm(self, kind: str, proposal: dict, goal=None) -> ConfirmationAnswer:
        return await self._run.confirm(kind, proposal, goal)

    async def call_tool(self, goal: Goal | None, call: dict, toolbox=None) -> str:
        """Run one of the model's tool calls under the permission mode; what the model reads back."""
        return await self._run.call_tool(goal, call, toolbox)
