"""The task loop and the plan on the embedded model, for real (issue 12): the command a person types,
the journal it leaves and the health figures it prints. SmolLM2-135M decides little by itself: its
new tasks and plan steps are held to short plain sentences by a grammar, and the guards (allowance,
depth, duplicates, validation) are Python's, so what is asserted here is what those guarantee."""

import json
import re

from .test_cli import cli  # noqa: F401  (the fixture)

OBJECTIVE = "Plan a small birthday party for a child"
SENTENCE = re.compile(r"^[A-Z][a-z]{1,14}( [A-Za-z0-9',-]{1,14}){2,11}[.]?$")


def _events(cli, run_id):
    return json.loads(cli("export", run_id, "--events").stdout)["events"]


def test_the_task_loop_on_the_embedded_model_grows_a_queue_within_its_guards(cli, tmp_path):
    out = cli("run", OBJECTIVE, "--strategy", "task-loop", "--model", "local", "--workspace", str(tmp_path / "ws"),
              "--max-iterations", "3", "--json", timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["state"] == "complete" and report["outcome"] in ("done", "partial")
    tasks = [g for g in report["goals"] if g["parent_id"] == "g1"]
    assert tasks[0]["text"] == OBJECTIVE and tasks[0]["status"] == "done"
    events = _events(cli, report["run_id"])
    facts = {}
    for e in events:
        if e["type"] in ("goal_added", "goal_changed") and e.get("facts"):
            facts.setdefault(e["goal_id"], {}).update(e["facts"])
    created = tasks[1:]
    assert created, "the model's first task made no new ones"
    for task in created:  # each is a sentence, made by a done task, within the allowance and the depth limit
        f = facts[task["id"]]
        assert SENTENCE.match(task["text"]), task["text"]
        assert f["creator"] and 1 <= f["task_depth"] <= 2 and 1 <= f["effective"] <= 9
    per_creator = {}
    for task in created:
        per_creator[facts[task["id"]]["creator"]] = per_creator.get(facts[task["id"]]["creator"], 0) + 1
    assert max(per_creator.values()) <= 2
    executed = [t for t in tasks if "iteration" in facts.get(t["id"], {})]
    assert len(executed) <= 3  # the iteration cap
    assert all(t["status"] in ("done", "failed", "skipped") for t in tasks)  # nothing left pending
    assert any("iteration cap" in t["note"] or "completeness check" in t["note"] for t in tasks if t["status"] == "skipped") \
        or not any(t["status"] == "skipped" for t in tasks)
    # the health figures: on stderr after the run, and as structured fields in the export
    assert re.search(r"^health: k \d\.\d\d", out.stderr, re.M), out.stderr[-500:]
    health = json.loads(cli("export", report["run_id"], "--health").stdout)["health"]
    assert health["strategy"] == "task-loop" and health["iterations"] == len(executed)
    assert health["k"] == round(health["created"] / health["completed"], 3)


def test_the_plan_on_the_embedded_model_runs_steps_of_plain_sentences(cli, tmp_path):
    out = cli("run", OBJECTIVE, "--strategy", "plan", "--model", "local", "--workspace", str(tmp_path / "ws"),
              "--json", timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["state"] == "complete" and report["outcome"] in ("done", "partial")
    plans = [e for e in _events(cli, report["run_id"]) if e["type"] == "plan_made"]
    assert plans and plans[0]["version"] == 1
    steps = plans[0]["steps"]
    assert 2 <= len(steps) <= 4, steps  # the grammar asks 3 or 4; a repeated one is dropped
    assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
    for s in steps:
        assert SENTENCE.match(s["goal"]), s["goal"]
        assert all(d < s["step"] for d in s["dependencies"])
    goals = {g["id"]: g for g in report["goals"]}
    assert all(goals[s["goal_id"]]["status"] == "done" and goals[s["goal_id"]]["result"] for s in steps)
    assert "health: plan v1" in out.stderr and "replans 0 of 2" in out.stderr
    health = json.loads(cli("export", report["run_id"], "--health").stdout)["health"]
    assert health["strategy"] == "plan" and health["replans"] == 0 and health["critical_path"]
