"""The task loop (seed 003) with models scripted as the seed's failure cases, and its guards."""

import asyncio
import json

import numpy as np
import pytest

from goalgui.engine import Limits, ModelReply, Run, RunRecord, RunState, Usage
from goalgui.engine import events as ev
from goalgui.engine.health import health
from goalgui.engine.strategies.task_loop import effective_priority, is_artefact

from .models import FunctionModel

OBJECTIVE = "Write a five-part blog series on sustainable packaging"
WORDS = ["materials", "shipping", "labels", "recycling", "costs", "regulation", "consumers", "retail", "design",
         "glass", "paper", "plastics", "compost", "carbon", "water", "tape", "boxes", "fillers", "ink", "foam"]


def artefact(request):
    return f"Here is {request.goal.text}: three paragraphs with 4 examples, 2 figures and a list of sources."


def loop(create, *, reprioritise=None, check=None, execute=artefact):
    """A model for the task loop: `create(request)` answers the create calls (a list of (text, priority))."""
    def answer(request):
        p = request.purpose
        if p == "execute":
            return execute(request)
        if p == "create":
            return {"tasks": [{"description": t, "priority": n} for t, n in create(request)]}
        if p == "reprioritise":
            return {"priorities": reprioritise(request) if reprioritise else []}
        if p == "check_complete":
            return check(request) if check else {"answer": "NO", "reason": "parts are missing"}
        return "summary"
    return FunctionModel(answer)


def fresh_words():
    words = iter([f"{a} {b}" for a in WORDS for b in WORDS if a != b])
    return lambda: next(words)


def start(model, **kwargs):
    kwargs.setdefault("limits", Limits(max_depth=2, max_goals=40))
    return Run.create(OBJECTIVE, model, strategy="task-loop", **kwargs)


def executed(run):
    return sorted((t for t in run.record.tasks() if "iteration" in t.facts), key=lambda t: t.facts["iteration"])


async def test_the_guarded_blog_series_run_of_seed_003_completes_seven_tasks_in_seven_iterations():
    word = fresh_words()
    # the completeness check says the objective is met once all seven are done (and not before)
    seven = lambda r: ({"answer": "YES", "reason": "all parts"} if sum(line.startswith("- ") for line in r.messages[-1]["content"].splitlines()) >= 7
                       else {"answer": "NO", "reason": "parts are missing"})  # noqa: E731
    model = loop(lambda r: [(f"Draft the part on {word()}", 2), (f"List sources on {word()}", 4)], check=seven)
    run = start(model, options={"first_task": "Draft the outline for all five parts"})
    assert await run.drive() is RunState.COMPLETE
    tasks = run.record.tasks()
    depths = sorted(t.facts["task_depth"] for t in tasks)
    assert depths == [0, 1, 1, 2, 2, 2, 2]  # 1 + 2 + 4
    assert all(t.status.value == "done" for t in tasks) and len(executed(run)) == 7
    assert max(t.facts["iteration"] for t in tasks) == 7
    assert not [t for t in tasks if t.status.value == "pending"]  # the queue is empty
    assert run.report()["outcome"] == "done"
    figures = health(run.record)
    assert figures["k"] == pytest.approx(6 / 7, abs=1e-3) and not figures["k_flag"]
    # depth-2 tasks are never asked to create: the create calls are the 3 tasks above the limit
    assert model.purposes().count("create") == 3


async def test_a_queue_run_dry_short_of_the_objective_is_a_partial_outcome():
    """Every task done, but the completeness check at the empty queue says the objective is not met:
    the run says partial, and why, instead of done."""
    run = start(loop(lambda r: []))
    assert await run.drive() is RunState.COMPLETE
    assert [t.status.value for t in run.record.tasks()] == ["done"]
    assert run.report()["outcome"] == "partial"
    assert "completeness check: not met (parts are missing)" in run.record.goals["g1"].note


async def test_a_creator_that_always_asks_for_three_gets_two_and_the_loop_ends():
    word = fresh_words()
    model = loop(lambda r: [(f"Write about {word()}", 3) for _ in range(3)])
    run = start(model)
    assert await run.drive() is RunState.COMPLETE
    tasks = run.record.tasks()
    assert all(t.facts["task_depth"] <= 2 for t in tasks)  # the depth limit holds
    assert all(t.facts.get("created", 0) <= 2 for t in tasks)  # the allowance caps what one task creates
    assert len(tasks) == 7
    figures = health(run.record)
    assert figures["k"] < 1
    create = [c for c in model.calls if c.purpose == "create"]
    assert all("AT MOST 2" in c.messages[0]["content"] and "empty list is correct" in c.messages[0]["content"]
               for c in create)
    assert all(c.schema["properties"]["tasks"]["maxItems"] == 2 for c in create)


async def test_the_allowance_follows_the_space_left_in_the_queue():
    word = fresh_words()
    model = loop(lambda r: [(f"Write about {word()}", 3) for _ in range(2)])
    run = start(model, limits=Limits(max_depth=9, max_goals=100), options={"max_queue": 3, "max_iterations": 6})
    assert await run.drive() is RunState.COMPLETE
    allowances = [c.schema["properties"]["tasks"]["maxItems"] for c in model.calls if c.purpose == "create"]
    assert allowances[:3] == [2, 2, 1] and set(allowances[2:]) == {1}  # one slot left: one asked for
    left = [t for t in run.record.tasks() if t.status.value == "skipped"]
    assert len(left) == 3  # the queue never held more than its cap; the iteration cap skipped what it held


async def test_the_goal_budget_caps_creation_without_stopping_the_loop():
    word = fresh_words()
    model = loop(lambda r: [(f"Write about {word()}", 3) for _ in range(2)])
    run = start(model, limits=Limits(max_depth=9, max_goals=5))
    assert await run.drive() is RunState.COMPLETE
    assert run.record.metrics.goals_created == 5
    assert "queue (or the goal budget) is full" in " ".join(t.note for t in run.record.tasks())


def once(items):
    """A creator that proposes `items` the first time and nothing after."""
    calls = []

    def create(request):
        calls.append(request)
        return items if len(calls) == 1 else []
    return create


def recording(seen):
    def execute(request):
        seen.append(request.goal.text)
        return artefact(request)
    return execute


async def test_equal_priorities_run_in_insertion_order_never_alphabetically():
    seen = []
    create = once([("Write zebra crossing notes", 3), ("Write apple orchard notes", 3)])
    run = start(loop(create, execute=recording(seen)))
    assert await run.drive() is RunState.COMPLETE
    assert seen[1:] == ["Write zebra crossing notes", "Write apple orchard notes"]


async def test_a_model_that_gives_every_task_priority_5_still_runs_artefact_work_first():
    seen = []
    create = once([("Research packaging regulations", 5), ("Draft part 1 on material choices", 5)])
    run = start(loop(create, execute=recording(seen), reprioritise=lambda r: [{"index": 0, "priority": 5},
                                                                      {"index": 1, "priority": 5}]))
    assert await run.drive() is RunState.COMPLETE
    assert seen[1:] == ["Draft part 1 on material choices", "Research packaging regulations"]
    by_text = {t.text: t.facts for t in run.record.tasks()}
    assert by_text["Research packaging regulations"]["effective"] == 8  # 5 + depth 1 + vague 2
    assert by_text["Draft part 1 on material choices"]["effective"] == 5  # 5 + 1 - artefact 1
    figures = health(run.record)
    assert figures["histogram"] == {"5": 2} and figures["histogram_flag"]


def test_effective_priority_is_seed_003s_adjustment():
    assert effective_priority(5, 1, "Research packaging regulations", 0, 2) == 8
    assert effective_priority(5, 1, "Draft part 1 on material choices", 0, 3) == 5
    assert effective_priority(3, 0, "Sort the notes", 12, 2) == 2  # waited more than 8 iterations
    assert effective_priority(9, 2, "Investigate everything", 0, 1) == 9 and effective_priority(1, 0, "write", 0, 1) == 1


class Pairs:
    """An embedder that knows which texts mean the same (a semantic one, as a test double)."""

    semantic = True

    def __init__(self, groups):
        self.groups = groups

    def embed(self, texts):
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, text in enumerate(texts):
            for g, (members, cosine) in enumerate(self.groups):
                if text in members:
                    out[i, g] = 1.0
                    if members.index(text):  # a paraphrase at the given cosine to the first member
                        out[i, g] = cosine
                        out[i, 4 + g] = (1 - cosine ** 2) ** 0.5
                    break
            else:  # any other text: a direction of its own, far from every group
                out[i, 8 + sum(map(ord, text)) % 8] = 1.0
        return out


async def test_paraphrased_duplicates_are_refused_above_the_threshold_and_kept_below_with_the_pairs_logged():
    near = ["Research eco-friendly packaging materials", "Investigate sustainable packaging material options"]
    far = ["Draft part 2 on supply chains", "Draft part 3 on supply chain costs"]
    first = [True]

    def create(request):
        if first[0]:
            first[0] = False
            return [(near[0], 3), (far[0], 3)]
        if request.goal.text == near[0]:
            return [(near[1], 3), (far[1], 3)]
        return []

    embedder = Pairs([(near, 0.93), (far, 0.80)])
    run = start(loop(create), embedder=embedder)
    assert await run.drive() is RunState.COMPLETE
    texts = [t.text for t in run.record.tasks()]
    assert near[1] not in texts and far[1] in texts  # 0.93 >= 0.88 refused; 0.80 kept
    refused = run.record.duplicates
    assert len(refused) == 1 and refused[0].how == "similar" and refused[0].text == near[1]
    assert refused[0].match_text == near[0] and refused[0].similarity == pytest.approx(0.93, abs=1e-3)
    kept = next(t for t in run.record.tasks() if t.text == far[1])
    assert kept.facts["nearest"]["similarity"] == pytest.approx(0.80, abs=1e-3)
    figures = health(run.record)
    assert figures["duplicates"][0]["match"] == near[0]
    assert any(d["text"] == far[1] for d in figures["nearest_kept"])


async def test_an_exact_repeat_is_refused_by_its_words():
    run = start(loop(once([("List six sources", 3), ("list  SIX sources!", 3)])))
    await run.drive()
    assert [d.how for d in run.record.duplicates] == ["exact"]


async def test_the_iteration_cap_skips_what_is_left_never_drops_it():
    word = fresh_words()
    model = loop(lambda r: [(f"Write about {word()}", 3), (f"Write on {word()}", 4)])
    run = start(model, limits=Limits(max_depth=5, max_goals=100), options={"max_iterations": 4})
    assert await run.drive() is RunState.COMPLETE
    tasks = run.record.tasks()
    assert len(executed(run)) == 4
    skipped = [t for t in tasks if t.status.value == "skipped"]
    assert skipped and all("iteration cap (4)" in t.note for t in skipped)
    assert len(run.report()["goals"]) == 1 + len(tasks)  # every created task is in the report
    assert run.report()["outcome"] == "partial"
    # the objective was worked on: its goal is done (not "skipped" as a goal whose sub-goals were),
    # and says how much the cap left
    root = run.record.goals["g1"]
    assert root.status.value == "done" and f"{len(skipped)} task(s) not run" in root.note


async def test_the_completeness_check_may_clear_the_queue():
    word = fresh_words()
    model = loop(lambda r: [(f"Write about {word()}", 3), (f"Write on {word()}", 4)],
                 check=lambda r: {"answer": "YES", "reason": "all five parts exist"})
    run = start(model, limits=Limits(max_depth=5, max_goals=100))
    assert await run.drive() is RunState.COMPLETE
    assert len(executed(run)) == 3  # checked after the third iteration
    cleared = [t for t in run.record.tasks() if t.status.value == "skipped"]
    assert cleared and all("completeness check" in t.note for t in cleared)
    root = run.record.goals[run.record.root_id]
    assert root.facts["covered"] is True and "all five parts exist" in root.note


async def test_a_described_result_is_not_an_artefact():
    assert is_artefact("Part 1: Materials. Paper, glass and mushroom foam each cut waste by 30-60%.")
    assert not is_artefact("I will research the materials and then write the part.")
    assert not is_artefact("To complete this task, I would first gather sources. Then I would draft it.")
    assert not is_artefact("Done.")

    def execute(request):
        return "I will write this part once the sources are in. First, I would list them."

    run = start(loop(lambda r: [], execute=execute))
    await run.drive()
    assert health(run.record)["artefact_share"] == 0.0


async def test_a_pause_mid_call_and_a_restore_from_the_journal_finish_the_same_run(journal):
    word = fresh_words()
    gate = asyncio.Event()
    calls = {"n": 0}

    class Slow(FunctionModel):
        async def complete(self, request):
            calls["n"] += 1
            if calls["n"] == 6 and not gate.is_set():
                await gate.wait()
            return await super().complete(request)

    def answer(request):
        return loop(lambda r: [(f"Draft the part on {word()}", 2), (f"List sources on {word()}", 4)]).fn(request)

    model = Slow(answer)
    run = start(model, sink=journal)
    driver = asyncio.create_task(run.drive())
    while calls["n"] < 6:
        await asyncio.sleep(0.01)
    run.pause()
    assert await driver is RunState.PAUSED
    run.close()
    gate.set()
    restored = Run.restore(journal.load(run.run_id), model, sink=journal)
    restored.resume()
    assert await restored.drive() is RunState.COMPLETE
    tasks = restored.record.tasks()
    assert len(tasks) == 7 and all(t.status.value == "done" for t in tasks)
    iterations = sorted(t.facts["iteration"] for t in tasks)
    assert iterations == list(range(1, 8))  # none executed twice, none lost
    again = RunRecord.from_events(journal.events(run.run_id))
    assert again.report() == restored.record.report()
    assert again.goals[tasks[-1].id].facts == tasks[-1].facts


async def test_health_is_journaled_where_the_run_stops(journal):
    run = start(loop(lambda r: []), sink=journal)
    await run.drive()
    run.close()
    figures = journal.final_health(run.run_id)
    assert figures["strategy"] == "task-loop" and figures["completed"] == 1 and figures["k"] == 0
    stops = [e for e in journal.events(run.run_id) if isinstance(e, ev.RunStateChanged) and e.state == "complete"]
    assert stops[-1].health == figures


async def test_garbage_create_and_reprioritise_replies_lose_nothing():
    def answer(request):
        if request.purpose == "execute":
            return artefact(request)
        if request.purpose == "create":
            return ModelReply('{"tasks": [{"description": 7}, "x", {"priority": "high", "description": "Write a '
                              'glossary of packaging terms"}]} trailing', usage=Usage(5, 5))
        if request.purpose == "reprioritise":
            return ModelReply(json.dumps({"priorities": [{"index": 99, "priority": 1}, {"index": "0"}]}),
                              usage=Usage(5, 5))
        return "NO"
    run = start(FunctionModel(answer))
    assert await run.drive() is RunState.COMPLETE
    texts = [t.text for t in run.record.tasks()]
    assert "Write a glossary of packaging terms" in texts
    assert next(t for t in run.record.tasks() if t.text.startswith("Write a glossary")).facts["priority"] == 5
