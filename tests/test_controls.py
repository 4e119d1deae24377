"""Pause, resume, cancel, skip and budget changes: direct calls that act at once, even mid-call."""

import asyncio
import time

import pytest

from goalgui.engine import IllegalTransition, InputError, Limits, Run, RunRecord, RunState
from goalgui.engine.lifecycle import TRANSITIONS, check_transition

from .models import FunctionModel, well_behaved


class Gate:
    """A model that blocks inside `complete` until released, so a control lands mid-call."""

    def __init__(self, width=3):
        self.width = width
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.block_purpose = "execute"
        self.calls = []
        self.name = "gate"

    async def complete(self, request):
        from goalgui.engine import ModelReply, Usage
        import json

        self.calls.append(request)
        if request.purpose == self.block_purpose and not self.release.is_set():
            self.entered.set()
            await self.release.wait()
        out = well_behaved(request, width=self.width)
        return ModelReply(out if isinstance(out, str) else json.dumps(out), usage=Usage(10, 5))


def test_transition_table_is_declared_and_illegal_moves_raise():
    assert RunState.ACTIVE in TRANSITIONS[RunState.PAUSED]
    assert not TRANSITIONS[RunState.COMPLETE] and not TRANSITIONS[RunState.CANCELLED]
    with pytest.raises(IllegalTransition):
        check_transition(RunState.COMPLETE, RunState.ACTIVE)
    with pytest.raises(IllegalTransition):
        check_transition(RunState.PAUSED, RunState.BLOCKED)


async def test_pause_mid_call_takes_effect_at_once_and_resume_reruns_the_goal():
    model = Gate()
    run = Run.create("Write a report", model)
    driver = asyncio.create_task(run.drive())
    await model.entered.wait()
    goal_id = model.calls[-1].goal.id
    t0 = time.perf_counter()
    run.pause()
    assert await asyncio.wait_for(driver, 1) is RunState.PAUSED
    assert time.perf_counter() - t0 < 1
    goal = run.record.goals[goal_id]
    assert goal.status.value == "pending" and goal.attempts == 0
    cancelled = [e for e in run.record.goals.values() if e.status.value == "running"]
    assert not cancelled
    assert run.record.metrics.tokens_estimated > 0  # the cancelled call's prompt is counted
    model.release.set()
    run.resume()
    assert await run.drive() is RunState.COMPLETE
    executed = [c.goal.id for c in model.calls if c.purpose == "execute"]
    assert executed.count(goal_id) == 2 and run.record.goals[goal_id].attempts == 1


async def test_metrics_do_not_grow_while_paused():
    model = Gate()
    run = Run.create("Write a report", model)
    driver = asyncio.create_task(run.drive())
    await model.entered.wait()
    run.pause()
    await driver
    before = run.record.active_seconds(time.time())
    await asyncio.sleep(0.2)
    assert run.record.active_seconds(time.time()) == pytest.approx(before)


async def test_cancel_mid_call_clears_the_run():
    model = Gate()
    run = Run.create("Write a report", model)
    driver = asyncio.create_task(run.drive())
    await model.entered.wait()
    run.cancel()
    assert await asyncio.wait_for(driver, 1) is RunState.CANCELLED
    report = run.report()
    assert report["state"] == "cancelled"
    assert {g["status"] for g in report["goals"]} <= {"done", "abandoned"}
    with pytest.raises(IllegalTransition):
        run.resume()


async def test_skip_the_running_goal_moves_on():
    model = Gate(width=2)
    run = Run.create("Write a report", model)
    driver = asyncio.create_task(run.drive())
    await model.entered.wait()
    skipped = run.skip()
    model.release.set()
    assert await asyncio.wait_for(driver, 2) is RunState.COMPLETE
    report = run.report()
    assert run.record.goals[skipped.id].status.value == "skipped"
    statuses = [g["status"] for g in report["goals"]]
    assert statuses.count("done") == 1 and report["outcome"] == "partial"
    assert report["goals"][0]["status"] == "skipped"  # parent: no failure, one child skipped


async def test_skip_a_pending_goal_by_id():
    model = Gate(width=3)
    run = Run.create("Write a report", model)
    driver = asyncio.create_task(run.drive())
    await model.entered.wait()
    last = list(run.record.goals)[-1]
    run.skip(last)
    model.release.set()
    await driver
    assert run.record.goals[last].status.value == "skipped"
    assert last not in [c.goal.id for c in model.calls if c.goal]
    with pytest.raises(InputError):
        run.skip(last)


async def test_raise_budget_after_block_and_resume():
    model = FunctionModel(lambda r: well_behaved(r, width=4))
    run = Run.create("Write a report", model, limits=Limits(max_goals=1))  # the root cannot be split
    assert await run.drive() is RunState.BLOCKED
    assert run.record.stop_reason.startswith("budget: goals")
    # the report's contract: a budget stop abandons what was pending, and each says it waits on the budget
    assert all(g.status.value == "abandoned" and "waiting on the budget" in g.note for g in run.record.goals.values())
    run.set_limits(max_goals=10)
    run.resume()
    assert await run.drive() is RunState.COMPLETE
    assert run.report()["outcome"] == "done"


async def test_a_run_the_model_blocked_keeps_its_unfinished_goals_pending_for_the_operator():
    from goalgui.engine import ModelReply

    def blocks(request):
        if request.purpose == "execute" and request.goal.id == "g3":
            return ModelReply("BLOCKED: needs the customer's address")
        return ModelReply(str(well_behaved(request)).replace("'", '"'))

    run = Run.create("Write a report", FunctionModel(blocks))
    assert await run.drive() is RunState.BLOCKED and run.record.stop_reason.startswith("blocked by model")
    statuses = [g.status.value for g in run.record.goals.values()]
    assert "pending" in statuses and not {"abandoned", "running"} & set(statuses)  # they wait for its answer
    run.cancel()  # now it can no longer continue
    assert {g.status.value for g in run.record.goals.values()} <= {"done", "failed", "abandoned"}


async def test_a_parent_over_done_and_skipped_children_says_what_it_is():
    model = Gate()
    run = Run.create("Write a report", model)
    driver = asyncio.create_task(run.drive())
    await model.entered.wait()  # the first sub-goal executes; the third waits
    run.skip("g4")
    model.release.set()
    assert await driver is RunState.COMPLETE
    root = run.record.goals["g1"]
    assert root.status.value == "skipped" and "sub-goals: 2 done, 1 skipped" in root.note


async def test_permission_mode_changes_without_a_model_turn():
    model = FunctionModel(lambda r: well_behaved(r))
    run = Run.create("Write a report", model)
    run.set_permission_mode("ask")
    assert run.record.permission_mode == "ask" and not model.calls
    with pytest.raises(InputError):
        run.set_permission_mode("yolo")


def test_creation_is_validated():
    model = FunctionModel(lambda r: "x")
    for bad in ("", "   "):
        with pytest.raises(InputError, match="empty"):
            Run.create(bad, model)
    with pytest.raises(InputError, match="4000"):
        Run.create("x" * 4001, model)
    with pytest.raises(InputError, match="between 1 s and 24 h"):
        Run.create("ok", model, limits=Limits(seconds=0.5))
    with pytest.raises(InputError, match="whole number"):
        Run.create("ok", model, limits=Limits(tokens=1.5))
    with pytest.raises(InputError, match="out of range"):
        Run.create("ok", model, limits=Limits(turns=0))
    with pytest.raises(InputError, match="unknown strategy"):
        Run.create("ok", model, strategy="nope")


async def test_rebuilding_from_events_gives_the_live_tree(journal):
    model = FunctionModel(lambda r: well_behaved(r, width=3, leaf_depth=2))
    run = Run.create("Write a report", model, sink=journal, limits=Limits(max_goals=100))
    await run.drive()
    rebuilt = journal.load(run.run_id)
    assert rebuilt.report() == run.record.report()
    assert rebuilt.report()["goals"] == run.report()["goals"]
    again = RunRecord.from_events(journal.events(run.run_id))
    assert again.metrics == run.record.metrics


async def test_a_goal_a_budget_stops_again_and_again_says_so_once():
    from goalgui.engine import ModelReply, Usage
    from goalgui.engine.run import TAKEN_UP, WAITING_ON_BUDGET

    def costly(request):
        return ModelReply(str(well_behaved(request)).replace("'", '"'), usage=Usage(400_000, 10))

    run = Run.create("Write a report", FunctionModel(costly), limits=Limits(tokens=400_000))
    for _cycle in range(3):
        assert await run.drive() is RunState.BLOCKED
        run.set_limits(tokens=run.record.metrics.tokens + 400_000)
        run.resume()
    notes = [g.note for g in run.record.goals.values()]
    assert all(n.count(TAKEN_UP) <= 1 and WAITING_ON_BUDGET not in n for n in notes)
