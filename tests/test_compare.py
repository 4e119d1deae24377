"""Two runs compared (issue 14, item 4): aligned by goal text and position, with known differences
made by scripted models, through the engine, the journal and `goalgui diff`."""

import json
import subprocess

from goalgui.cli_compare import compare_runs
from goalgui.compare import CHANGED_RESULT, CHANGED_STATUS, MATCHED, ONLY_A, ONLY_B, Tree, align, comparison
from goalgui.engine import Limits, Run

from .conftest import cli_env, goalgui_cmd
from .models import FunctionModel, split_script

OBJECTIVE = "Write a short guide to composting"


def scripted(parts, results=None, fail=()):
    """Splits the root into `parts`, executes each (its result from `results` or a default), and
    verifies NO for the parts in `fail` (they fail after their retries)."""
    results = results or {}

    def answer(r):
        if r.purpose == "actionable":
            return "YES it is small" if r.goal.depth >= 1 else "NO too big"
        if r.purpose == "decompose":
            return list(parts)
        if r.purpose == "execute":
            return results.get(r.goal.text, f"Three facts about {r.goal.text.lower()}, with sources.")
        if r.purpose == "verify":
            return "NO: it does not" if r.goal.text in fail else "YES"
        return "summary"
    return FunctionModel(answer)


async def two_runs(journal, model_a, model_b):
    runs = []
    for model in (model_a, model_b):
        run = Run.create(OBJECTIVE, model, sink=journal, limits=Limits(max_goals=20))
        await run.drive()
        runs.append(run)
    return runs


async def test_known_differences_are_found_and_placed(journal):
    a, b = await two_runs(
        journal,
        scripted(["List what goes in", "Choose a bin", "Turn the heap"]),
        scripted(["List what goes in", "Pick a site", "Turn the heap"],
                 results={"List what goes in": "Greens and browns: peel, leaves, card; no meat."}))
    rows = align(a.record, b.record)
    kinds = [(r.kind, (r.a or r.b).text) for r in rows]
    assert kinds == [(MATCHED, OBJECTIVE), (CHANGED_RESULT, "List what goes in"), (ONLY_A, "Choose a bin"),
                     (ONLY_B, "Pick a site"), (MATCHED, "Turn the heap")]
    data, text = compare_runs(journal, a.run_id, b.run_id)
    assert data["counts"] == {MATCHED: 2, CHANGED_STATUS: 0, CHANGED_RESULT: 1, ONLY_A: 1, ONLY_B: 1}
    assert data["first_divergence"] == {"kind": CHANGED_RESULT, "text": "List what goes in", "a": "g2", "b": "g2"}
    heap = next(r for r in data["rows"] if r["text"] == "Turn the heap")
    assert heap["a"]["calls"] == 3 and heap["b"]["calls"] == 3  # actionable, execute, verify
    assert heap["a"]["tokens"] == a.record.goals[heap["a"]["id"]].tokens
    assert data["a"]["tokens"] == a.record.metrics.tokens_in + a.record.metrics.tokens_out
    assert "First divergence (changed result, A g2 / B g2): List what goes in" in text
    assert "| Choose a bin | only in A | g3 done" in text.replace("&nbsp;", "")


async def test_a_status_change_and_an_inserted_sibling_do_not_shift_the_rest(journal):
    a, b = await two_runs(
        journal,
        scripted(["Gather greens", "Gather browns", "Mix them"]),
        scripted(["Gather greens", "Buy a thermometer", "Gather browns", "Mix them"], fail={"Mix them"}))
    data = comparison(Tree.of(a.record), Tree.of(b.record))
    got = [(r["kind"], r["text"]) for r in data["rows"]][1:]
    assert got == [(MATCHED, "Gather greens"), (ONLY_B, "Buy a thermometer"), (MATCHED, "Gather browns"),
                   (CHANGED_STATUS, "Mix them")]
    assert data["rows"][0]["kind"] == CHANGED_STATUS  # the root: done in A, failed in B
    assert data["first_divergence"]["text"] == OBJECTIVE


async def test_a_run_compared_with_itself_matches_everywhere(journal):
    (a, _b) = await two_runs(journal, scripted(["One part", "Another part"]), scripted(["x"]))
    data, text = compare_runs(journal, a.run_id, a.run_id)
    assert set(r["kind"] for r in data["rows"]) == {MATCHED} and data["first_divergence"] is None
    assert "The trees are the same" in text


def test_goalgui_diff_prints_markdown_or_json_and_refuses_unknown_runs(tmp_path):
    home = tmp_path / "home"
    env = cli_env(home)
    ids = []
    for parts in (["Find the first fact", "Draft the answer"], ["Find the first fact", "Check a second source"]):
        spec = split_script(tmp_path / f"s{len(ids)}.json", parts, execute="a concrete result")
        out = subprocess.run(goalgui_cmd("run", "Compare me", "--model", spec, "--json"), env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        ids.append(json.loads(out.stdout)["run_id"])
    md = subprocess.run(goalgui_cmd("diff", ids[0][:6], ids[1]), env=env, capture_output=True, text=True, timeout=60)
    assert md.returncode == 0, md.stderr
    assert f"# Compare {ids[0]} (A) with {ids[1]} (B)" in md.stdout and "2 matched" in md.stdout
    assert "First divergence (only in A, A g3): Draft the answer" in md.stdout
    js = subprocess.run(goalgui_cmd("diff", ids[0], ids[1], "--format", "json"), env=env, capture_output=True,
                        text=True, timeout=60)
    data = json.loads(js.stdout)
    assert data["counts"]["only in A"] == 1 and data["counts"]["only in B"] == 1
    bad = subprocess.run(goalgui_cmd("diff", ids[0], "nosuchrun"), env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "nosuchrun" in bad.stderr


def test_a_goal_text_cannot_open_a_column_or_hide_marks_in_the_markdown():
    from goalgui.compare import markdown

    text = "back\\|slash | col \u061c\u200b\ufeff\U000e0041 end"
    row = {"kind": ONLY_A, "depth": 1, "text": text, "a": {"id": "g2", "status": "done", "tokens": 1, "calls": 1,
                                                          "seconds": 0.1}, "b": None}
    totals = {"run_id": "r", "state": "complete", "goals": 2, "tokens": 1, "calls": 1, "seconds": 0.1}
    out = markdown({"a": totals, "b": totals, "counts": {k: 0 for k in (MATCHED, CHANGED_STATUS, CHANGED_RESULT,
                                                                       ONLY_A, ONLY_B)},
                    "first_divergence": None, "rows": [row]})
    line = next(l for l in out.splitlines() if "slash" in l)
    assert line.count(" | ") == 3  # four cells: no bar of the goal's opened a fifth
    assert all(c not in out for c in "\u061c\u200b\ufeff\U000e0041")
