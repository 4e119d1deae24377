"""The plan (seed 004): validated before anything runs, steps as a DAG side by side, capped replans."""

import asyncio
import time

import pytest

from goalgui.engine import Limits, Run, RunRecord, RunState
from goalgui.engine.confirm import ConfirmationAnswer, Outcome
from goalgui.engine.health import health
from goalgui.engine.strategies.plan import PlanError, validate

from .models import FunctionModel

OBJECTIVE = "Answer the customer about their late order"
TOOLS = {"read_file", "run_shell", "fetch_url"}


def step(i, goal, deps=(), tool=None):
    return {"id": i, "goal": goal, "tool": tool, "dependencies": list(deps)}


GOOD = {"steps": [step(1, "Fetch the order data"), step(2, "Check the delivery status"),
                  step(3, "Write the answer to the customer", [1, 2])]}


@pytest.mark.parametrize("plan, message", [
    ({"steps": [step(1, "a", [2]), step(2, "b", [1])]}, "step 1 depends on step 2, which comes after it and "
                                                         "depends on step 1 (a cycle)"),
    ({"steps": [step(1, "a"), step(2, "b", [3]), step(3, "c")]}, "step 2 depends on step 3, which comes after it"),
    ({"steps": [step(1, "a"), step(2, "b", tool="search_orders")]}, "step 2: unknown tool 'search_orders'"),
    ({"steps": []}, "the plan has 0 steps (1 to 10 allowed)"),
    ({"steps": [step(i, f"s{i}") for i in range(1, 12)]}, "the plan has 11 steps (1 to 10 allowed)"),
    ({"steps": [step(1, "a"), step(2, "b", [7])]}, "step 2 depends on step 7, which does not exist"),
    ({"steps": [step(1, "a", [1])]}, "step 1 depends on itself"),
    ({"steps": [step(1, "a"), step(1, "b")]}, "step 1: its id is used twice"),
    ({"steps": [step(1, "")]}, "step 1 has no goal"),
    ({"plan": "do it"}, "expected {\"steps\": [...]}"),
])
def test_a_bad_plan_is_refused_naming_the_step(plan, message):
    with pytest.raises(PlanError) as caught:
        validate(plan, TOOLS)
    assert message in str(caught.value)


def test_a_good_plan_passes_in_id_order():
    steps = validate({"steps": [GOOD["steps"][2], *GOOD["steps"][:2]]}, TOOLS)
    assert [s["step"] for s in steps] == [1, 2, 3] and steps[2]["dependencies"] == [1, 2]


def planner(plan=GOOD, *, fail=(), replan=None, execute=None):
    """A model for the plan: `plan` answers the plan call, steps whose goal is in `fail` fail."""
    def answer(request):
        if request.purpose == "plan":
            return plan(request) if callable(plan) else plan
        if request.purpose == "replan":
            return replan(request) if callable(replan) else replan
        if request.purpose == "execute":
            if execute is not None:
                return execute(request)
            if request.goal.text in fail:
                return "FAILED: the order system did not answer"
            return f"Result of {request.goal.text}: order 1234, shipped on the 3rd, 2 parcels."
        return "summary"
    return FunctionModel(answer)


async def test_a_plan_runs_its_steps_after_their_dependencies():
    model = planner()
    run = Run.create(OBJECTIVE, model, strategy="plan")
    assert await run.drive() is RunState.COMPLETE
    assert run.report()["outcome"] == "done"
    order = [c.goal.text for c in model.calls if c.purpose == "execute"]
    assert order[-1] == "Write the answer to the customer"
    last = next(c for c in model.calls if c.purpose == "execute" and c.goal.text.startswith("Write"))
    assert "order 1234" in last.messages[-1]["content"]  # it sees its dependencies' results
    versions = run.record.plans
    assert len(versions) == 1 and [s["step"] for s in versions[0].steps] == [1, 2, 3]


async def test_a_bad_plan_goes_back_to_the_model_once_with_the_error():
    answers = iter([{"steps": [step(1, "a", [2]), step(2, "b")]}, GOOD])
    model = planner(lambda r: next(answers))
    run = Run.create(OBJECTIVE, model, strategy="plan")
    assert await run.drive() is RunState.COMPLETE
    second = [c for c in model.calls if c.purpose == "plan"][1]
    assert "step 1 depends on step 2, which comes after it" in second.messages[-1]["content"]
    assert "plan refused: step 1" in run.record.goals[run.record.root_id].note


async def test_a_plan_refused_twice_parks_the_run_with_the_reason():
    model = planner({"steps": [step(1, "a"), step(2, "b", tool="search_orders")]})
    run = Run.create(OBJECTIVE, model, strategy="plan")
    assert await run.drive() is RunState.PAUSED
    assert run.record.stop_reason.startswith("bad response: the plan was refused twice: step 2: unknown tool")
    assert len(run.record.goals) == 1  # nothing ran


async def test_independent_steps_really_overlap():
    spans = {}

    class Timed(FunctionModel):
        async def complete(self, request):
            if request.purpose == "execute":
                began = time.monotonic()
                await asyncio.sleep(1.0)
                spans[request.goal.text] = (began, time.monotonic())
            return await super().complete(request)

    plan = {"steps": [step(1, "Check stock"), step(2, "Check prices"), step(3, "Check reviews")]}
    run = Run.create(OBJECTIVE, Timed(planner(plan).fn), strategy="plan", options={"max_parallel": 3})
    assert await run.drive() is RunState.COMPLETE
    starts, ends = [s for s, _ in spans.values()], [e for _, e in spans.values()]
    assert len(spans) == 3 and max(starts) < min(ends)  # all three were running at once
    spans.clear()
    run = Run.create(OBJECTIVE, Timed(planner(plan).fn), strategy="plan", options={"max_parallel": 1})
    await run.drive()
    ordered = sorted(spans.values())
    assert all(a[1] <= b[0] for a, b in zip(ordered, ordered[1:]))  # one at a time


async def test_a_failing_step_replans_at_most_twice_then_gives_up():
    model = planner(fail={"Fetch the order data", "Fetch the order data again", "Fetch it a third way"},
                    replan=lambda r: {"steps": [step(4 if "4 on" in r.messages[0]["content"] else 7,
                                                     "Fetch the order data again" if "4 on" in r.messages[0]["content"]
                                                     else "Fetch it a third way")]})
    run = Run.create(OBJECTIVE, model, strategy="plan")
    assert await run.drive() is RunState.COMPLETE
    report = run.report()
    assert report["outcome"] == "gave_up" and report["state"] == "complete"
    assert model.purposes().count("replan") == 2 and len(run.record.plans) == 3
    root = run.record.goals[run.record.root_id]
    assert root.status.value == "failed" and "gave up" in root.note
    assert health(run.record)["replans"] == 2 and health(run.record)["gave_up"]


async def test_a_replan_that_works_ends_done_and_keeps_the_done_steps():
    def replan(request):
        return {"steps": [step(4, "Fetch the order from the backup"), step(5, "Write the answer", [2, 4])]}
    model = planner(fail={"Fetch the order data"}, replan=replan)
    run = Run.create(OBJECTIVE, model, strategy="plan")
    assert await run.drive() is RunState.COMPLETE
    assert run.report()["outcome"] == "done"
    v2 = run.record.plans[-1]
    assert [s["step"] for s in v2.steps] == [2, 4, 5] and "step 1 failed" in v2.reason
    executions = [c.goal.text for c in model.calls if c.purpose == "execute"]
    assert executions.count("Check the delivery status") == 1  # done in v1, kept in v2
    replaced = next(g for g in run.record.goals.values() if g.text == "Write the answer to the customer")
    assert replaced.status.value == "skipped" and "replaced by plan v2" in replaced.note
    assert run.record.goals[run.record.root_id].status.value == "done"
    figures = health(run.record)
    assert figures["replans"] == 1 and figures["critical_path"][-1] == 5


async def test_skipping_a_running_step_cancels_only_it_and_its_dependents_are_skipped():
    gate = asyncio.Event()

    class Gated(FunctionModel):
        async def complete(self, request):
            if request.purpose == "execute" and request.goal.text == "Fetch the order data":
                await gate.wait()
            return await super().complete(request)

    run = Run.create(OBJECTIVE, Gated(planner().fn), strategy="plan")
    driver = asyncio.create_task(run.drive())
    while not any(g.text == "Fetch the order data" and g.status.value == "running" for g in run.record.goals.values()):
        await asyncio.sleep(0.01)
    target = next(g for g in run.record.goals.values() if g.text == "Fetch the order data")
    run.skip(target.id)
    assert await asyncio.wait_for(driver, 5) is RunState.COMPLETE
    by_text = {g.text: g for g in run.record.goals.values()}
    assert by_text["Check the delivery status"].status.value == "done"
    assert by_text["Write the answer to the customer"].status.value == "skipped"
    assert "dependency step 1 was skipped" in by_text["Write the answer to the customer"].note
    assert run.report()["outcome"] == "partial"


async def test_pause_stops_every_running_step_and_a_restore_finishes_without_redoing_done_ones(journal):
    gate = asyncio.Event()
    plan = {"steps": [step(1, "Check stock"), step(2, "Check prices"), step(3, "Write it up", [1, 2])]}

    class Gated(FunctionModel):
        async def complete(self, request):
            if request.purpose == "execute" and request.goal.text == "Check prices" and not gate.is_set():
                await gate.wait()
            return await super().complete(request)

    model = Gated(planner(plan).fn)
    run = Run.create(OBJECTIVE, model, strategy="plan", sink=journal)
    driver = asyncio.create_task(run.drive())
    while not any(g.text == "Check stock" and g.status.value == "done" for g in run.record.goals.values()):
        await asyncio.sleep(0.01)
    run.pause()
    assert await asyncio.wait_for(driver, 2) is RunState.PAUSED
    assert not [g for g in run.record.goals.values() if g.status.value == "running"]
    run.close()
    gate.set()
    restored = Run.restore(journal.load(run.run_id), model, sink=journal)
    restored.resume()
    assert await restored.drive() is RunState.COMPLETE
    executions = [c.goal.text for c in model.calls if c.purpose == "execute"]
    assert executions.count("Check stock") == 1 and "Check prices" in executions  # done before the pause: kept
    assert RunRecord.from_events(journal.events(run.run_id)).report() == restored.record.report()


async def test_in_ask_mode_the_plan_is_confirmed_and_edited_like_sub_goals():
    asked = []

    async def confirmer(request):
        asked.append(request)
        if request.kind == "plan":  # drop the second step, reword the first
            return ConfirmationAnswer(Outcome.APPROVED, edits={"subgoals": ["Fetch the order data from the shop",
                                                                            "Write the answer to the customer"]})
        return ConfirmationAnswer(Outcome.APPROVED)

    run = Run.create(OBJECTIVE, planner(), strategy="plan", permission_mode="ask", confirmer=confirmer)
    assert await run.drive() is RunState.COMPLETE
    assert asked[0].kind == "plan" and [s["goal"] for s in asked[0].proposal["steps"]][1] == "Check the delivery status"
    steps = run.record.plans[0].steps
    assert [(s["step"], s["goal"], s["dependencies"]) for s in steps] == [
        (1, "Fetch the order data from the shop", []), (3, "Write the answer to the customer", [1])]


async def test_plan_mode_holds_the_plan_for_review_then_runs_it():
    run = Run.create(OBJECTIVE, planner(), strategy="plan", permission_mode="plan")
    assert await run.drive() is RunState.PAUSED
    assert run.record.stop_reason.startswith("needs confirmation: the plan is ready")
    assert len(run.record.plans) == 1 and all(g.status.value == "pending" for g in run.record.tasks())
    run.set_permission_mode("auto")
    run.resume()
    assert await run.drive() is RunState.COMPLETE and run.report()["outcome"] == "done"


async def test_a_budget_stop_mid_parallel_abandons_and_a_raise_resumes():
    plan = {"steps": [step(1, "Check stock"), step(2, "Check prices"), step(3, "Write it up", [1, 2])]}
    run = Run.create(OBJECTIVE, planner(plan), strategy="plan", limits=Limits(turns=2))
    assert await run.drive() is RunState.BLOCKED
    assert run.record.stop_reason.startswith("budget: turns")
    run.set_limits(turns=20)
    run.resume()
    assert await run.drive() is RunState.COMPLETE and run.report()["outcome"] == "done"
