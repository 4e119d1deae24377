"""The forward-only task cursor of seed 002 (issue 10, part 4), with models scripted to misbehave,
through the real engine, journal and tools on a real temporary workspace."""

import asyncio
import json
import re

from goalgui.engine import Limits, ModelReply, Run, RunState, Usage
from goalgui.engine.run import PLAN_READY
from goalgui.tools import default_toolbox

from .models import FunctionModel
from .test_cli import cli  # noqa: F401  (the fixture)

OBJECTIVE = "Create the notes file, then prove it exists and report its checksum"
# a plan of two tasks: write a file (then read it back, then settle with evidence), and check it in text
PROOF_SCRIPT = {"rules": [
    {"purpose": "decompose", "reply": {"tasks": ["Write proof.txt", "Check proof.txt"]}},
    {"purpose": "confirm_plan", "reply": "APPROVE"},
    {"purpose": "work", "match": "write proof", "times": 1, "reply": "",
     "tool_calls": [{"id": "1", "name": "write_file", "arguments": {"path": "proof.txt", "content": "ok"}}]},
    {"purpose": "work", "match": "write proof", "times": 1, "reply": "",
     "tool_calls": [{"id": "2", "name": "read_file", "arguments": {"path": "proof.txt"}}]},
    {"purpose": "work", "match": "write proof", "reply": "",
     "tool_calls": [{"id": "3", "name": "task_complete",
                     "arguments": {"id": 1, "summary": "wrote it", "evidence": "read back: ok"}}]},
    {"purpose": "work", "match": "check proof", "reply": "proof.txt holds ok"},
    {"purpose": "summarize", "reply": "done"},
]}


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


class Script:
    """A cursor model: a plan, a review, and for each task number the replies of its rounds in
    order (a list of tool calls, or text); past the script it fails the task."""

    def __init__(self, tasks, rounds, review="APPROVE", plans=None):
        self.plans = plans or [{"tasks": tasks}]
        self.review = review
        self.rounds = {k: list(v) for k, v in rounds.items()}
        self.work_requests = []

    def __call__(self, request):
        p = request.purpose
        if p == "decompose":
            return self.plans.pop(0) if len(self.plans) > 1 else self.plans[0]
        if p == "confirm_plan":
            return self.review
        if p == "work":
            self.work_requests.append(request)
            number = int(re.search(r"Active task: (\d+)", request.messages[-1]["content"] if request.messages[-1]
                                   ["role"] == "user" else _last_user(request.messages)).group(1))
            queue = self.rounds.get(number) or [[call("task_fail", id=number, reason="script ended")]]
            step = queue.pop(0)
            if isinstance(step, str):
                return step
            calls = [{"id": f"t{number}-{len(self.work_requests)}-{i}", **c} for i, c in enumerate(step)]
            return ModelReply("", tool_calls=calls, usage=Usage(20, 10))
        return "summary"


def _last_user(messages):
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def cursor_run(script, tmp_path, journal=None, mode="auto", **kwargs):
    model = FunctionModel(script)
    run = Run.create(OBJECTIVE, model, strategy="cursor", tools=default_toolbox(tmp_path / "ws"),
                     permission_mode=mode, sink=journal, limits=Limits(max_goals=20), **kwargs)
    return run, model


def tasks(run):
    root = run.record.goals[run.record.root_id]
    return [run.record.goals[c] for c in root.children]


def tool_results(journal, run):
    return [(e.name, e.result) for e in journal.events(run.run_id) if e.type == "tool_called"]


async def test_the_plan_is_made_confirmed_and_shown_before_any_work(journal, tmp_path):
    script = Script(["Create notes.txt", "Prove notes.txt exists"], {
        1: [[call("write_file", path="notes.txt", content="hi")], [call("read_file", path="notes.txt")],
            [call("task_complete", id=1, summary="made notes.txt", evidence="read it back: hi")]],
        2: [[call("md5_file", path="notes.txt")],
            [call("task_complete", id=2, summary="it exists", evidence="md5 49f68a5c8493ec2c0bf489821c21fc3b")]],
    })
    run, model = cursor_run(script, tmp_path, journal)
    assert await run.drive() is RunState.COMPLETE
    assert model.purposes()[:2] == ["decompose", "confirm_plan"]
    events = list(journal.events(run.run_id))
    first_work = next(i for i, e in enumerate(events) if e.type == "model_called" and e.purpose == "work")
    added = [i for i, e in enumerate(events) if e.type == "goal_added" and e.depth == 1]
    assert len(added) == 2 and max(added) < first_work  # the whole plan is in the tree before work
    assert [(t.text, t.status.value) for t in tasks(run)] == [("Create notes.txt", "done"),
                                                            ("Prove notes.txt exists", "done")]
    assert "evidence: read it back: hi" in tasks(run)[0].note and tasks(run)[0].result == "made notes.txt"
    assert run.report()["outcome"] == "done" and (tmp_path / "ws" / "notes.txt").read_text() == "hi"
    # the model was told the plan, the active task by number, and the settled ones
    last = _last_user(script.work_requests[-1].messages)
    assert "[x] 1. Create notes.txt" in last and "[>] 2. Prove notes.txt exists" in last
    assert "g2" not in last and "g3" not in last  # internal goal ids are never shown to a model


async def test_completing_an_unverified_task_is_refused_until_a_check_has_run(journal, tmp_path):
    script = Script(["Create notes.txt", "Report the checksum"], {
        1: [[call("write_file", path="notes.txt", content="x")],
            [call("task_complete", id=1, summary="done", evidence="trust me")],
            [call("list_files")], [call("task_complete", id=1, summary="done", evidence="listed: notes.txt")]],
        2: ["The checksum is reported."],  # a text answer settles a task
    })
    run, _ = cursor_run(script, tmp_path, journal)
    assert await run.drive() is RunState.COMPLETE
    results = tool_results(journal, run)
    assert results[1][0] == "task_complete" and results[1][1].startswith("refused: this task used tools but ran no "
                                                                          "check")
    assert results[3] == ("task_complete", "task 1 complete")
    assert tasks(run)[0].status.value == "done" and "evidence: listed: notes.txt" in tasks(run)[0].note
    assert tasks(run)[1].status.value == "done" and tasks(run)[1].result == "The checksum is reported."
    assert "settled from a text answer" in tasks(run)[1].note


async def test_the_evidence_gate_can_be_turned_off_and_never_gates_a_failure(journal, tmp_path):
    script = Script(["Create notes.txt", "Upload it"], {
        1: [[call("write_file", path="notes.txt", content="x")],
            [call("task_complete", id=1, summary="done", evidence="none")]],
        2: [[call("write_file", path="y.txt", content="y")], [call("task_fail", id=2, reason="no server")]],
    })
    run, _ = cursor_run(script, tmp_path, journal, options={"evidence_gate": False})
    assert await run.drive() is RunState.COMPLETE
    assert [t.status.value for t in tasks(run)] == ["done", "failed"]
    assert "task_fail: no server" in tasks(run)[1].note


async def test_settling_the_wrong_task_or_a_settled_one_is_refused(journal, tmp_path):
    script = Script(["Say hello", "Say goodbye"], {
        1: [[call("task_complete", id=2, summary="x", evidence="y")],
            [call("task_complete", id=1, summary="hello", evidence="said")]],
        2: [[call("task_complete", id=1, summary="again", evidence="z")],
            [call("task_complete", id=2, summary="goodbye", evidence="said")]],
    })
    run, _ = cursor_run(script, tmp_path, journal)
    assert await run.drive() is RunState.COMPLETE
    results = [r for name, r in tool_results(journal, run)]
    assert results[0] == "refused: task 2 is not the active task; the active task is 1"
    assert results[2] == "refused: task 1 is already settled and is not worked again; the active task is 2"
    assert [t.result for t in tasks(run)] == ["hello", "goodbye"]


async def test_a_task_looping_on_a_failing_tool_escalates_then_fails_forward(journal, tmp_path):
    failing = [call("read_file", path="missing.txt")]
    script = Script(["Read the missing file", "Say done"], {
        1: [failing, failing, failing, "", ""],  # the fourth round has no tools: it answers nothing
        2: ["done"],
    })
    run, _ = cursor_run(script, tmp_path, journal)
    assert await run.drive() is RunState.COMPLETE
    first = tasks(run)[0]
    assert first.status.value == "failed"
    notes = first.note
    for stage in ("escalation 1: re-anchor", "escalation 2: narrow", "escalation 3: force-close", "fail forward"):
        assert stage in notes, notes
    assert notes.index("re-anchor") < notes.index("narrow") < notes.index("force-close") < notes.index("fail forward")
    offered = [[t["name"] for t in (r.tools or [])] for r in script.work_requests if r.goal.text == first.text]
    assert "read_file" in offered[0] and "read_file" not in offered[2]  # narrowed: the failing tool dropped
    assert offered[3] == []  # force-close: no tools at all
    assert "do not redo them" in _last_user(script.work_requests[1].messages)  # re-anchored
    assert tasks(run)[1].status.value == "done"  # the cursor moved on


async def test_a_restated_plan_is_asked_for_again_and_short_questions_are_not_planned(tmp_path):
    script = Script([], {1: ["ok"], 2: ["ok"]}, plans=[{"tasks": [OBJECTIVE]}, {"tasks": ["Make it", "Check it"]}])
    run, model = cursor_run(script, tmp_path)
    await run.drive()
    assert model.purposes()[:3] == ["decompose", "decompose", "confirm_plan"]
    assert "at least two steps" in _last_user(model.calls[1].messages)
    assert [t.text for t in tasks(run)] == ["Make it", "Check it"]

    chat = FunctionModel(Script([], {1: ["Paris."]}))
    run = Run.create("What is the capital of France?", chat, strategy="cursor")
    assert await run.drive() is RunState.COMPLETE
    assert chat.purposes()[0] == "work" and [t.text for t in tasks(run)] == ["What is the capital of France?"]


async def test_the_plan_review_may_correct_but_not_collapse_and_a_garbled_one_keeps_the_plan(tmp_path):
    for review, expected in ((json.dumps({"tasks": ["B", "A", "C"]}), ["B", "A", "C"]),
                             (json.dumps({"tasks": ["All of it"]}), ["A", "B"]),
                             ("I am not sure {", ["A", "B"])):
        script = Script(["A", "B"], {1: ["ok"], 2: ["ok"], 3: ["ok"]}, review=review)
        run, _ = cursor_run(script, tmp_path)
        await run.drive()
        assert [t.text for t in tasks(run)] == expected, review


async def test_a_small_model_copying_the_directive_is_retried_once_as_a_plain_round(tmp_path):
    script = Script(["A", "B"], {1: ["Active task: 1. Settle it with task_complete or task_fail (id 1)."], 2: ["ok"]})

    def fn(request):
        if request.purpose == "work" and "Do the task below" in request.messages[0]["content"]:
            return "The answer to A."
        return script(request)

    run = Run.create(OBJECTIVE, FunctionModel(fn), strategy="cursor")
    await run.drive()
    first = tasks(run)[0]
    assert first.result == "The answer to A." and "copied the task directive" in first.note


async def test_plan_mode_holds_the_plan_for_review_then_runs_it(journal, tmp_path):
    script = Script(["A", "B"], {1: ["did A"], 2: ["did B"]})
    run, model = cursor_run(script, tmp_path, journal, mode="plan")
    assert await run.drive() is RunState.PAUSED and run.record.stop_reason == PLAN_READY
    assert "work" not in model.purposes() and [t.status.value for t in tasks(run)] == ["pending", "pending"]
    run.set_permission_mode("auto")
    run.resume()
    assert await run.drive() is RunState.COMPLETE
    assert [t.result for t in tasks(run)] == ["did A", "did B"]


async def test_the_plan_and_the_cursor_survive_a_restore_and_settled_tasks_never_rerun(journal, tmp_path):
    from goalgui.journal import Journal

    script = Script(["A", "B", "C"], {1: ["did A"], 2: ["did B"], 3: ["did C"]})
    model = FunctionModel(script, delay=0.05)
    run = Run.create(OBJECTIVE, model, strategy="cursor", tools=default_toolbox(tmp_path / "ws"), sink=journal)
    driving = asyncio.ensure_future(run.drive())
    while not (tasks(run) and tasks(run)[0].status.value == "done"):
        await asyncio.sleep(0.005)
    run.pause("checkpoint")  # mid-call on task 2: that call is cancelled, task 2 runs again on resume
    assert await driving is RunState.PAUSED
    journal.close()
    again = Journal(journal.path)
    record = again.take(run.run_id)
    second = FunctionModel(script)
    restored = Run.restore(record, second, sink=again, tools=default_toolbox(tmp_path / "ws"))
    restored.resume()
    assert await restored.drive() is RunState.COMPLETE
    assert [t.result for t in tasks(restored)] == ["did A", "did B", "did C"]
    worked = [r.goal.text for r in second.calls if r.purpose == "work"]
    assert "A" not in worked and "decompose" not in second.purposes()
    again.close()


def test_the_command_runs_the_cursor_and_refuses_nothing_built(cli, tmp_path):
    script = tmp_path / "cursor.json"
    script.write_text(json.dumps(PROOF_SCRIPT))
    out = cli("run", OBJECTIVE, "--strategy", "cursor", "--model", f"scripted:{script}",
              "--workspace", str(tmp_path / "ws"), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert [g["status"] for g in report["goals"]] == ["done", "done", "done"]
    assert "evidence: read back: ok" in report["goals"][1]["note"]
    assert (tmp_path / "ws" / "proof.txt").read_text() == "ok"


def test_a_cursor_run_killed_mid_task_resumes_at_the_same_task(cli, tmp_path):
    import subprocess
    import time

    from goalgui.journal import Journal

    from .conftest import cli_env, goalgui_cmd

    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"latency": 0.4, "rules": [
        {"purpose": "decompose", "reply": {"tasks": ["Write alpha", "Write beta", "Write gamma"]}},
        {"purpose": "confirm_plan", "reply": "APPROVE"},
        {"purpose": "work", "match": "alpha", "reply": "alpha written"},
        {"purpose": "work", "match": "beta", "reply": "beta written"},
        {"purpose": "work", "match": "gamma", "reply": "gamma written"},
        {"purpose": "summarize", "reply": "done"},
    ]}))
    journal_path = cli.home / "data" / "journal.sqlite3"
    with subprocess.Popen(goalgui_cmd("run", OBJECTIVE, "--strategy", "cursor", "--model", f"scripted:{script}"),
                          cwd=cli.tmp, env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # kill it once task 1 is settled, while task 2 is worked on
            time.sleep(0.1)
            if journal_path.exists():
                with Journal(journal_path) as j:
                    runs = j.runs()
                    if runs and "done" in [g["status"] for g in j.load(runs[0]["run_id"]).report(0)["goals"][1:2]]:
                        break
        proc.kill()
        proc.communicate()
    run_id = json.loads(cli("runs", "--json").stdout)[0]["run_id"]
    with Journal(journal_path) as j:
        before = j.load(run_id)
        killed_at = before.last_seq
    assert before.goals["g2"].status.value == "done" and before.goals["g4"].status.value != "done"
    out = cli("resume", run_id, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert [g["result"] for g in report["goals"][1:]] == ["alpha written", "beta written", "gamma written"]
    with Journal(journal_path) as j:
        after = [e for e in j.events(run_id, after=killed_at) if e.type == "model_called"]
    assert "decompose" not in [e.purpose for e in after]  # the plan came back from the journal
    assert "g2" not in [e.goal_id for e in after]  # the settled task was not worked again


async def test_a_category_that_keeps_yielding_gets_more_budget_and_one_that_fails_gets_less(journal, tmp_path):
    space = tmp_path / "ws"
    space.mkdir()
    for i in range(12):
        (space / f"f{i}.txt").write_text(f"content {i}")
    reads = [[call("read_file", path=f"f{i}.txt")] for i in range(12)]
    script = Script(["Read every file", "Say done"], {1: reads + ["read them all"], 2: ["done"]})
    run, _ = cursor_run(script, tmp_path, journal, options={"unproductive_limit": 10})
    cursor = run.strategy
    cursor.budget["file"] = 10  # close to the reads this task will make
    assert await run.drive() is RunState.COMPLETE
    notes = run.record.goals[run.record.root_id].note
    assert "file budget -> " in notes, notes  # extended while reads kept returning something new
    assert cursor.budget["file"] > 10 and cursor.used["file"] == 12

    # each round finds one file and misses four: productive rounds, a category that mostly fails
    rounds = [[call("read_file", path=f"f{r}.txt")] + [call("read_file", path=f"missing{r}-{i}.txt") for i in range(4)]
              for r in range(2)]
    script = Script(["Read the files", "Say done"], {1: rounds + ["read"], 2: ["done"]})
    run, _ = cursor_run(script, tmp_path, journal)
    assert await run.drive() is RunState.COMPLETE
    cursor = run.strategy
    assert cursor.budget["file"] == 6  # cut to just above the calls made (5) once a fifth was wasted
    refused = [r for n, r in tool_results(journal, run) if "budget of 6 calls is spent" in r]
    assert len(refused) == 4  # after the second round's first read, nothing more of the category ran


async def test_the_plan_is_cut_to_the_goals_the_budget_allows(journal, tmp_path):
    """Issue 11, item 6, for the cursor: a plan of three under a budget of three goals keeps two."""
    def plan(request):
        if request.purpose == "decompose":
            return {"tasks": ["Find the first fact", "Find the second fact", "Write the answer down"]}
        if request.purpose == "confirm_plan":
            return "APPROVE"
        return "the answer"

    run = Run.create("Find two facts about rivers, then write the answer down", FunctionModel(plan),
                     strategy="cursor", sink=journal, limits=Limits(max_goals=3))
    await run.drive()
    root = run.record.goals[run.record.root_id]
    assert len(root.children) == 2 and run.record.metrics.goals_created == 3
    assert "plan cut to 2 task(s): the goal budget allows 2 more" in root.note
