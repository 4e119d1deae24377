"""One shape for every strategy (issue 10, part 1): the protocol and its narrow context, the
permission table, the states that know whether they are final or resumable."""

import asyncio

import pytest

from goalgui.engine import Action, Decision, InputError, PermissionMode, Run, RunState, decide
from goalgui.engine import strategies
from goalgui.engine.record import GoalStatus
from goalgui.engine.strategies import Context

from .models import FunctionModel, well_behaved

# DESIGN.md, "Tools and permission modes", column by column: plan, ask, auto-edit, auto
EXPECTED = {
    Action.SUBGOALS: ("hold", "ask", "run", "run"),
    Action.PLAN: ("hold", "ask", "run", "run"),
    Action.CREATE_GOAL: ("ask", "ask", "ask", "run"),
    Action.EXECUTE: ("hold", "run", "run", "run"),
    Action.READ: ("run", "run", "run", "run"),
    Action.WRITE: ("refuse", "ask", "run", "run"),
    Action.SHELL: ("refuse", "ask", "ask", "run"),
    Action.NETWORK: ("refuse", "ask", "ask", "run"),
}


def test_one_table_decides_for_every_mode_and_action():
    modes = ("plan", "ask", "auto-edit", "auto")
    for action, row in EXPECTED.items():
        assert tuple(decide(mode, action).value for mode in modes) == row, action
    assert set(EXPECTED) == set(Action)
    assert decide(PermissionMode.AUTO, Action.SHELL) is Decision.RUN


def test_an_unknown_mode_is_refused_in_one_line():
    with pytest.raises(InputError, match="unknown permission mode 'yolo': use one of ask, auto-edit, auto, plan"):
        PermissionMode.of("yolo")


def test_states_know_whether_they_are_final_or_resumable():
    assert [s.value for s in RunState if s.final] == ["complete", "cancelled"]
    assert [s.value for s in RunState if s.resumable] == ["paused", "blocked"]
    assert not RunState.ACTIVE.final and not RunState.ACTIVE.resumable


def test_a_strategy_is_handed_a_narrow_context_never_the_run():
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)))
    context = run.strategy.ctx
    assert isinstance(context, Context) and not isinstance(context, Run)
    for member in ("pause", "cancel", "drive", "recorder", "emit", "strategy", "model"):
        assert not hasattr(context, member), member
    with pytest.raises(AttributeError):
        context.anything_else = 1  # slots: nothing can be hung on it either


class OneShot:
    """A strategy as a plug-in writes one: answers the objective in one model call, through the context."""

    name = "one-shot"

    def __init__(self, context):
        self.ctx = context
        self.current_goal_id = None
        self.rebuild()

    def rebuild(self):
        root = self.ctx.record.goals.get(self.ctx.record.root_id or "")
        self.todo = root is not None and root.status is GoalStatus.PENDING

    def has_work(self):
        return self.todo

    def planned(self):
        return False

    async def step(self):
        goal = self.ctx.record.goals[self.ctx.record.root_id]
        self.ctx.begin_turn(goal)
        reply = await self.ctx.call_model("execute", [{"role": "user", "content": goal.text}], goal)
        self.ctx.set_goal(goal, status=GoalStatus.DONE, result=reply.text)
        self.todo = False


def test_a_new_strategy_is_one_module_registered_by_name(monkeypatch):
    monkeypatch.setattr(strategies, "STRATEGIES", (*strategies.STRATEGIES, "one-shot"))
    monkeypatch.setitem(strategies.BUILT, "one-shot", OneShot)
    run = Run.create("Say hello", FunctionModel(lambda r: well_behaved(r)), strategy="one-shot")
    assert asyncio.run(run.drive()) is RunState.COMPLETE
    report = run.report()
    assert report["strategy"] == "one-shot" and report["goals"][0]["status"] == "done"
    assert report["metrics"]["turns"] == 1


def test_strategies_not_built_are_refused_with_the_ones_that_are(monkeypatch):
    monkeypatch.delitem(strategies.BUILT, "plan")
    with pytest.raises(InputError, match="the plan strategy is not built yet; use one of goal-stack"):
        Run.create("Say hello", FunctionModel(lambda r: well_behaved(r)), strategy="plan")
